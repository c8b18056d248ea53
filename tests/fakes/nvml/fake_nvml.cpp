// Placeholder: the fake libnvidia-ml.so (owned by the gpu helper).
extern "C" int nvmlInit_v2() { return 0; }
