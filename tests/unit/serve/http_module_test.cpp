// serve's HTTP module (serve/http_module.hpp) as serve loads it: the real dltune-serve-http.so
// found beside the running program (this test binary sits beside it in the build directory),
// serving a MetricsSource that lives in the program, over a real socket.
#include "serve/http_module.hpp"

#include <httplib.h>

#include <atomic>
#include <thread>

#include <gtest/gtest.h>

namespace dltune::serve::http_module_test {
namespace {

class CountingSource final : public MetricsSource {
 public:
  [[nodiscard]] std::shared_ptr<const Exposition> exposition() const override {
    return std::make_shared<const Exposition>(Exposition{"dltune_up 1\n", 5});
  }
  [[nodiscard]] std::string count_scrape_text() override {
    return "dltune_scrapes_total " + std::to_string(++scrapes) + "\n";
  }
  [[nodiscard]] Health health() const override { return {false, "no sample for 3 intervals"}; }
  std::atomic<int> scrapes{0};
};

TEST(HttpModule, LoadsBesideTheProgramAndServesTheProgramsSource) {
  auto module = http_module();
  ASSERT_TRUE(module) << module.error().message();
  EXPECT_EQ((*module)->layout, http_module_layout());
  auto again = http_module();  // loaded once
  ASSERT_TRUE(again);
  EXPECT_EQ(*again, *module);

  CountingSource source;
  auto server = (*module)->bind(ListenAddress{"127.0.0.1", 0}, HttpLimits{}, source, nullptr);
  ASSERT_TRUE(server) << server.error().message();
  ASSERT_GT((*server)->bound().port, 0);
  std::thread serving([&] { (*server)->run(); });
  for (int i = 0; i < 5000 && !(*server)->running(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));

  httplib::Client http("127.0.0.1", (*server)->bound().port);
  auto metrics = http.Get("/metrics");
  ASSERT_TRUE(metrics) << httplib::to_string(metrics.error());
  EXPECT_EQ(metrics->status, 200);
  EXPECT_EQ(metrics->body, "dltune_up 1\ndltune_scrapes_total 1\n");
  auto health = http.Get("/healthz");
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 503);
  EXPECT_EQ(health->body, "no sample for 3 intervals\n");
  EXPECT_EQ(source.scrapes.load(), 1);

  (*server)->stop();
  serving.join();
  EXPECT_FALSE((*server)->running());
}

TEST(HttpModule, LoadsTheWebConfigThroughTheModule) {
  auto module = http_module();
  ASSERT_TRUE(module) << module.error().message();
  auto missing = (*module)->load_web_config("/nonexistent/dltune-web.yml");
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message().find("/nonexistent/dltune-web.yml"), std::string::npos)
      << missing.error().message();
}

}  // namespace
}  // namespace dltune::serve::http_module_test
