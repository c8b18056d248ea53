#pragma once
// The parts of the NVML C API that dltune uses, defined here from the NVML API Reference
// (https://docs.nvidia.com/deploy/nvml-api/, nvml.h of CUDA 12.x) because nvml.h is not
// installed and must not be needed to build. Every layout is pinned to the versioned symbol that
// takes it (CONTRIBUTING.md, convention 7): a struct is only ever passed to the symbol named beside
// it.
#include <cstddef>
#include <cstdint>

namespace dltune::gpu::nvml {

// nvmlReturn_t (NVML reference, "Return values", enum nvmlReturn_enum)
using Return = int;
inline constexpr Return kSuccess = 0;
inline constexpr Return kErrorUninitialized = 1;
inline constexpr Return kErrorInvalidArgument = 2;
inline constexpr Return kErrorNotSupported = 3;
inline constexpr Return kErrorNoPermission = 4;
inline constexpr Return kErrorNotFound = 6;
inline constexpr Return kErrorInsufficientSize = 7;
inline constexpr Return kErrorDriverNotLoaded = 9;
inline constexpr Return kErrorTimeout = 10;
inline constexpr Return kErrorFunctionNotFound = 13;
inline constexpr Return kErrorGpuIsLost = 15;
inline constexpr Return kErrorLibRmVersionMismatch = 18;
inline constexpr Return kErrorUnknown = 999;

// nvmlDevice_t: an opaque handle (struct nvmlDevice_st*).
struct DeviceOpaque;
using Device = DeviceOpaque*;

// nvmlEnableState_t
inline constexpr int kFeatureDisabled = 0;
inline constexpr int kFeatureEnabled = 1;

// nvmlClockType_t
inline constexpr int kClockGraphics = 0;
inline constexpr int kClockSm = 1;
inline constexpr int kClockMem = 2;

// nvmlMemoryErrorType_t and nvmlEccCounterType_t (nvmlDeviceGetTotalEccErrors)
inline constexpr int kMemoryErrorCorrected = 0;
inline constexpr int kMemoryErrorUncorrected = 1;
inline constexpr int kVolatileEcc = 0;
inline constexpr int kAggregateEcc = 1;

// nvmlTemperatureSensors_t
inline constexpr int kTemperatureGpu = 0;

// Buffer sizes (NVML reference, "Constants"): NVML_DEVICE_NAME_V2_BUFFER_SIZE,
// NVML_DEVICE_UUID_V2_BUFFER_SIZE, NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE,
// NVML_SYSTEM_NVML_VERSION_BUFFER_SIZE.
inline constexpr unsigned kNameBufferSize = 96;
inline constexpr unsigned kUuidBufferSize = 96;
inline constexpr unsigned kVersionBufferSize = 80;

// NVML_NVLINK_MAX_LINKS (18 since NVML 12; 12 before, 6 on Pascal)
inline constexpr unsigned kNvLinkMaxLinks = 18;

// nvmlPciInfo_t as taken by nvmlDeviceGetPciInfo_v2/_v3 and nvmlDeviceGetNvLinkRemotePciInfo_v2
// (NVML reference, struct nvmlPciInfo_t; NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE = 16,
// NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE = 32).
struct PciInfoV2 {
  char bus_id_legacy[16];
  unsigned int domain;
  unsigned int bus;
  unsigned int device;
  unsigned int pci_device_id;      // device id << 16 | vendor id
  unsigned int pci_sub_system_id;  // subsystem device id << 16 | subsystem vendor id
  char bus_id[32];                 // "00000000:17:00.0"
};
static_assert(sizeof(PciInfoV2) == 68);

// The layout before NVML 8 (nvmlDeviceGetPciInfo and nvmlDeviceGetNvLinkRemotePciInfo without a
// version suffix): a 16-byte bus id first and four reserved words at the end.
struct PciInfoV1 {
  char bus_id[16];
  unsigned int domain;
  unsigned int bus;
  unsigned int device;
  unsigned int pci_device_id;
  unsigned int pci_sub_system_id;
  unsigned int reserved[4];
};
static_assert(sizeof(PciInfoV1) == 52);

// nvmlMemory_t (nvmlDeviceGetMemoryInfo)
struct MemoryV1 {
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
};
static_assert(sizeof(MemoryV1) == 24);

// nvmlMemory_v2_t (nvmlDeviceGetMemoryInfo_v2): the caller sets `version` to nvmlMemory_v2,
// NVML_STRUCT_VERSION(Memory, 2) = sizeof(nvmlMemory_v2_t) | 2 << 24.
struct MemoryV2 {
  unsigned int version;
  unsigned long long total;
  unsigned long long reserved;
  unsigned long long free;
  unsigned long long used;
};
static_assert(sizeof(MemoryV2) == 40);
inline constexpr unsigned int kMemoryV2Version = sizeof(MemoryV2) | (2u << 24);

// nvmlUtilization_t (nvmlDeviceGetUtilizationRates): percent of the driver's last sample period
// in which a kernel ran / device memory was read or written.
struct Utilization {
  unsigned int gpu;
  unsigned int memory;
};
static_assert(sizeof(Utilization) == 8);

// nvmlPcieUtilCounter_t (nvmlDeviceGetPcieThroughput)
inline constexpr int kPcieUtilTxBytes = 0;
inline constexpr int kPcieUtilRxBytes = 1;

// nvmlProcessInfo_t as taken by nvmlDeviceGetComputeRunningProcesses_v3 and _v2 (the same
// layout under both, NVML reference struct nvmlProcessInfo_v2_t).
struct ProcessInfoV2 {
  unsigned int pid;
  unsigned long long used_gpu_memory;  // bytes; kValueNotAvailable when unknown (MIG, Windows)
  unsigned int gpu_instance_id;        // 0xFFFFFFFF when not on a MIG instance
  unsigned int compute_instance_id;
};
static_assert(sizeof(ProcessInfoV2) == 24);
// nvmlProcessUtilizationSample_t (nvmlDeviceGetProcessUtilization(device, samples, count,
// lastSeenTimeStamp), Maxwell and newer): one per process that used the GPU during the driver's
// last sample period, its utilisations in percent; timeStamp in microseconds (CPU time). With
// samples NULL the call says the count needed (NVML_ERROR_INSUFFICIENT_SIZE); with none newer
// than lastSeenTimeStamp, NVML_ERROR_NOT_FOUND.
struct ProcessUtilizationSample {
  unsigned int pid;
  unsigned long long time_stamp;
  unsigned int sm_util;
  unsigned int mem_util;
  unsigned int enc_util;
  unsigned int dec_util;
};
static_assert(sizeof(ProcessUtilizationSample) == 32);
using DeviceProcessUtilizationFn = Return (*)(Device, ProcessUtilizationSample*, unsigned int*,
                                              unsigned long long);
// nvmlProcessInfo_v1_t (nvmlDeviceGetComputeRunningProcesses without a suffix).
struct ProcessInfoV1 {
  unsigned int pid;
  unsigned long long used_gpu_memory;
};
static_assert(sizeof(ProcessInfoV1) == 16);
// NVML_VALUE_NOT_AVAILABLE: (unsigned long long)-1
inline constexpr unsigned long long kValueNotAvailable = ~0ull;

// nvmlClocksEventReasons / nvmlClocksThrottleReasons bits (NVML reference, "Clocks Event
// Reasons"); the same bits under both names.
struct ReasonBit {
  unsigned long long bit;
  const char* name;
};
inline constexpr ReasonBit kClockEventReasons[] = {
    {0x1ull, "GpuIdle"},
    {0x2ull, "ApplicationsClocksSetting"},
    {0x4ull, "SwPowerCap"},
    {0x8ull, "HwSlowdown"},
    {0x10ull, "SyncBoost"},
    {0x20ull, "SwThermalSlowdown"},
    {0x40ull, "HwThermalSlowdown"},
    {0x80ull, "HwPowerBrakeSlowdown"},
    {0x100ull, "DisplayClockSetting"},
};

// The C signatures (NVML reference, each function's page).
using InitFn = Return (*)();
using ShutdownFn = Return (*)();
using ErrorStringFn = const char* (*)(Return);
using StringFn = Return (*)(char*, unsigned int);  // nvmlSystemGet*Version
using IntOutFn = Return (*)(int*);                 // CudaDriverVersion
using CountFn = Return (*)(unsigned int*);         // DeviceGetCount
using HandleByIndexFn = Return (*)(unsigned int, Device*);
using DeviceStringFn = Return (*)(Device, char*, unsigned int);  // Name, UUID
using DevicePciV2Fn = Return (*)(Device, PciInfoV2*);
using DevicePciV1Fn = Return (*)(Device, PciInfoV1*);
using DeviceMemoryV2Fn = Return (*)(Device, MemoryV2*);
using DeviceMemoryV1Fn = Return (*)(Device, MemoryV1*);
using DeviceEnableFn = Return (*)(Device, int*);         // PersistenceMode
using DeviceEccModeFn = Return (*)(Device, int*, int*);  // current, pending
using DeviceEccCountFn = Return (*)(Device, int, int, unsigned long long*);
using DeviceClockFn = Return (*)(Device, int, unsigned int*);  // ClockInfo, MaxClockInfo
using DeviceU64Fn = Return (*)(Device, unsigned long long*);   // clock event reasons
using DeviceUintFn = Return (*)(Device, unsigned int*);        // PCIe, power
using DeviceTemperatureFn = Return (*)(Device, int, unsigned int*);
using DeviceLinkStateFn = Return (*)(Device, unsigned int, int*);
using DeviceLinkPciV2Fn = Return (*)(Device, unsigned int, PciInfoV2*);
using DeviceLinkPciV1Fn = Return (*)(Device, unsigned int, PciInfoV1*);
using HandleByUuidFn = Return (*)(const char*, Device*);  // nvmlDeviceGetHandleByUUID
using DeviceSetEnableFn = Return (*)(Device, int);        // SetPersistenceMode (nvmlEnableState_t)
using DeviceUtilizationFn = Return (*)(Device, Utilization*);
using DevicePcieThroughputFn = Return (*)(Device, int, unsigned int*);  // nvmlPcieUtilCounter_t
// nvmlDeviceGetComputeRunningProcesses*: infoCount in (room) and out (how many; with
// NVML_ERROR_INSUFFICIENT_SIZE when the room was too small).
using DeviceProcessesV2Fn = Return (*)(Device, unsigned int*, ProcessInfoV2*);
// nvmlEventSet_t: an opaque handle (struct nvmlEventSet_st*).
struct EventSetOpaque;
using EventSet = EventSetOpaque*;
// nvmlEventTypeXidCriticalError (nvml.h, "Event Types"); eventData holds the Xid code (999 for an
// unknown one).
inline constexpr unsigned long long kEventTypeXidCriticalError = 0x8ULL;
// nvmlEventData_t as nvmlEventSetWait_v2 fills it; the unversioned call fills only the first
// three fields (device, eventType, eventData), so one struct serves both.
struct EventData {
  Device device;
  unsigned long long event_type;
  unsigned long long event_data;
  unsigned int gpu_instance_id;
  unsigned int compute_instance_id;
};
static_assert(sizeof(EventData) == 32);
using EventSetCreateFn = Return (*)(EventSet*);
using RegisterEventsFn = Return (*)(Device, unsigned long long, EventSet);
using EventSetWaitFn = Return (*)(EventSet, EventData*, unsigned int);  // timeout in ms
using EventSetFreeFn = Return (*)(EventSet);
using DeviceProcessesV1Fn = Return (*)(Device, unsigned int*, ProcessInfoV1*);

// Memory health (NVML API Reference, "Device Queries"). nvmlDeviceGetRemappedRows (Ampere and
// newer): rows remapped for corrected and for uncorrected errors, whether a remap waits for the
// next reset, whether a remap ever failed. nvmlDeviceGetRetiredPages (Kepler to Turing; its
// pageCount in/out: 0 in asks for the count, with NVML_ERROR_INSUFFICIENT_SIZE when there are
// pages) per nvmlPageRetirementCause_t, and nvmlDeviceGetRetiredPagesPendingStatus
// (nvmlEnableState_t).
inline constexpr int kPageRetirementMultipleSingleBit = 0;
inline constexpr int kPageRetirementDoubleBit = 1;
using DeviceRemappedRowsFn = Return (*)(Device, unsigned int*, unsigned int*, unsigned int*,
                                        unsigned int*);
using DeviceRetiredPagesFn = Return (*)(Device, int, unsigned int*, unsigned long long*);
// Power (milliwatts): nvmlDeviceGetPowerManagementLimit, ...DefaultLimit (DeviceUintFn) and
// ...LimitConstraints (min, max).
using DeviceTwoUintFn = Return (*)(Device, unsigned int*, unsigned int*);
// nvmlDeviceGetMigMode(device, currentMode, pendingMode): NVML_DEVICE_MIG_DISABLE 0, _ENABLE 1.
// nvmlDeviceGetMaxMigDeviceCount (DeviceUintFn); nvmlDeviceGetMigDeviceHandleByIndex gives
// NVML_ERROR_NOT_FOUND for an index with no MIG device; nvmlDeviceGetGpuInstanceId and
// nvmlDeviceGetComputeInstanceId on a MIG device's handle (DeviceUintFn).
using DeviceMigHandleFn = Return (*)(Device, unsigned int, Device*);

// NVLink (NVML API Reference, "NvLink Methods"): nvmlDeviceGetNvLinkVersion(device, link,
// version); nvmlDeviceGetNvLinkErrorCounter(device, link, nvmlNvLinkErrorCounter_t,
// counterValue); nvmlDeviceGetNvLinkRemoteDeviceType(device, link, nvmlIntNvLinkDeviceType_t*).
inline constexpr int kNvLinkErrorDlReplay = 0;
inline constexpr int kNvLinkErrorDlRecovery = 1;
inline constexpr int kNvLinkErrorDlCrcFlit = 2;
inline constexpr int kNvLinkErrorDlCrcData = 3;
inline constexpr unsigned kNvLinkDeviceTypeGpu = 0x00;
inline constexpr unsigned kNvLinkDeviceTypeIbmNpu = 0x01;
inline constexpr unsigned kNvLinkDeviceTypeSwitch = 0x02;
using DeviceLinkUintFn = Return (*)(Device, unsigned int, unsigned int*);  // version, remote type
using DeviceLinkCounterFn = Return (*)(Device, unsigned int, int, unsigned long long*);

// Topology (NVML API Reference, "Topology Queries"): nvmlDeviceGetTopologyCommonAncestor(device1,
// device2, nvmlGpuTopologyLevel_t*) and nvmlDeviceGetP2PStatus(device1, device2,
// nvmlGpuP2PCapsIndex_t, nvmlGpuP2PStatus_t*).
inline constexpr int kTopologyInternal = 0;     // the same board (a multi-GPU card)
inline constexpr int kTopologySingle = 10;      // one PCIe switch between them
inline constexpr int kTopologyMultiple = 20;    // several PCIe switches, no host bridge
inline constexpr int kTopologyHostBridge = 30;  // the same host bridge (root complex)
inline constexpr int kTopologyNode = 40;        // the same NUMA node (CPU)
inline constexpr int kTopologySystem = 50;      // across the CPUs' interconnect
inline constexpr int kP2pCapsRead = 0;
inline constexpr int kP2pCapsNvlink = 2;
inline constexpr int kP2pStatusOk = 0;
using PairLevelFn = Return (*)(Device, Device, int*);
using PairP2pFn = Return (*)(Device, Device, int, int*);

// Field values (NVML API Reference, "Field Value Queries"): nvmlDeviceGetFieldValues(device,
// valuesCount, values) fills an array of nvmlFieldValue_t whose fieldId and scopeId the caller
// set; the call's own return says whether it ran, each value's nvmlReturn whether that field was
// read. nvmlValueType_t says which member of the nvmlValue_t union holds the value.
inline constexpr int kValueTypeDouble = 0;
inline constexpr int kValueTypeUnsignedInt = 1;
inline constexpr int kValueTypeUnsignedLong = 2;
inline constexpr int kValueTypeUnsignedLongLong = 3;
inline constexpr int kValueTypeSignedLongLong = 4;
inline constexpr int kValueTypeSignedInt = 5;
inline constexpr int kValueTypeUnsignedShort = 6;
union Value {
  double d;
  unsigned int ui;
  unsigned long ul;
  unsigned long long ull;
  long long sll;
  int si;
  unsigned short us;
};
static_assert(sizeof(Value) == 8);
struct FieldValue {
  unsigned int field_id;
  unsigned int scope_id;
  long long timestamp;     // microseconds since 1970
  long long latency_usec;  // how old the value was when read
  int value_type;          // nvmlValueType_t
  Return nvml_return;      // this field's own result
  Value value;
};
static_assert(sizeof(FieldValue) == 40);
static_assert(offsetof(FieldValue, value) == 32);
using DeviceFieldValuesFn = Return (*)(Device, int, FieldValue*);
// NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX and _RX (nvml.h, "Field Identifiers"): the NVLink data
// (payload) sent and received, cumulative KiB since the driver loaded. (RAW_TX 140 and RAW_RX
// 141 count the protocol's overhead too; dltune does not read them.)
inline constexpr unsigned kFieldNvLinkThroughputDataTx = 138;
inline constexpr unsigned kFieldNvLinkThroughputDataRx = 139;

// GPU Performance Monitoring (NVML API Reference, "GPM Functions" and "GPM Structs"; Hopper and
// newer): two samples of a GPU's counters taken apart in time give metrics averaged over the
// interval between them. nvmlGpmQueryDeviceSupport(device, nvmlGpmSupport_t*) says whether the
// GPU has them; nvmlGpmSampleAlloc / nvmlGpmSampleFree own the opaque samples;
// nvmlGpmSampleGet(device, sample) fills one; nvmlGpmMetricsGet(nvmlGpmMetricsGet_t*) computes
// the metrics named in its array from sample1 and sample2, each with its own nvmlReturn. The
// *_UTIL metrics are percentages (0.0-100.0).
struct GpmSampleOpaque;
using GpmSample = GpmSampleOpaque*;
inline constexpr unsigned kGpmSupportVersion = 1;     // NVML_GPM_SUPPORT_VERSION
inline constexpr unsigned kGpmMetricsGetVersion = 1;  // NVML_GPM_METRICS_GET_VERSION
struct GpmSupport {
  unsigned int version;
  unsigned int is_supported_device;
};
static_assert(sizeof(GpmSupport) == 8);
// nvmlGpmMetricId_t: the ones dltune reads.
inline constexpr unsigned kGpmMetricSmUtil = 2;         // share of SMs busy (DCGM's SM activity)
inline constexpr unsigned kGpmMetricSmOccupancy = 3;    // warps resident / the SMs' maximum
inline constexpr unsigned kGpmMetricAnyTensorUtil = 5;  // share of time a tensor pipe was busy
inline constexpr unsigned kGpmMetricDramBwUtil = 10;    // DRAM bandwidth used / its peak
struct GpmMetric {
  unsigned int metric_id;
  Return nvml_return;  // this metric's own result
  double value;
  struct {
    char* short_name;
    char* long_name;
    char* unit;
  } metric_info;
};
static_assert(sizeof(GpmMetric) == 40);
static_assert(offsetof(GpmMetric, value) == 8);
// nvmlGpmMetricsGet_t ends in an array of NVML_GPM_METRIC_MAX metrics, a number that has grown
// with NVML's versions (98 in CUDA 12.0's nvml.h, more since). The call reads and writes only the
// first numMetrics entries; the array here is larger than any NVML_GPM_METRIC_MAX so far, so that
// a library that touched its whole array would still stay inside this one.
inline constexpr std::size_t kGpmMetricSlots = 512;
struct GpmMetricsGet {
  unsigned int version;
  unsigned int num_metrics;
  GpmSample sample1;
  GpmSample sample2;
  GpmMetric metrics[kGpmMetricSlots];
};
static_assert(offsetof(GpmMetricsGet, sample1) == 8);
static_assert(offsetof(GpmMetricsGet, metrics) == 24);
using GpmQueryDeviceSupportFn = Return (*)(Device, GpmSupport*);
using GpmSampleAllocFn = Return (*)(GpmSample*);
using GpmSampleFreeFn = Return (*)(GpmSample);
using GpmSampleGetFn = Return (*)(Device, GpmSample);
using GpmMetricsGetFn = Return (*)(GpmMetricsGet*);

}  // namespace dltune::gpu::nvml
