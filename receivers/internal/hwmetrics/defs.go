package hwmetrics

// MetricID names one metric of metadata.yaml; the order is the YAML's.
type MetricID int

// The metrics, in metadata.yaml order.
const (
	HwGpuUtilization MetricID = iota
	HwGpuMemoryUsage
	HwGpuMemoryLimit
	HwGpuMemoryUtilization
	HwGpuTemperature
	HwGpuPowerDraw
	HwGpuPowerLimit
	HwErrors
	HwStatus
	HwGpuPartitionMemoryLimit
	HwGpuPartitionMemoryUsage
	numMetrics
)

// kind is the OTLP data type of a metric.
type kind int

const (
	gaugeDouble kind = iota // gauge, double
	upDownInt               // non-monotonic cumulative sum, int
	counterInt              // monotonic cumulative sum, int
)

type def struct {
	name, description, unit string
	kind                    kind
	attrs                   []string // attribute keys in metadata.yaml order
}

var (
	deviceAttrs    = []string{AttrID, AttrType, AttrVendor, AttrModel, AttrDriverVersion, AttrFirmwareVersion, AttrSerialNumber, AttrIndex, AttrBusID}
	partitionAttrs = []string{AttrID, AttrType, AttrVendor, AttrModel, AttrParent, AttrPartitionKind, AttrPartitionID, AttrPartitionProfile}
)

// defs mirrors the metrics section of metadata.yaml (checked by metadata_test.go).
var defs = [numMetrics]def{
	HwGpuUtilization:          {"hw.gpu.utilization", "Fraction of time the device was busy (0-1).", "1", gaugeDouble, deviceAttrs},
	HwGpuMemoryUsage:          {"hw.gpu.memory.usage", "Device memory in use.", "By", upDownInt, deviceAttrs},
	HwGpuMemoryLimit:          {"hw.gpu.memory.limit", "Device memory size.", "By", upDownInt, deviceAttrs},
	HwGpuMemoryUtilization:    {"hw.gpu.memory.utilization", "Fraction of device memory in use (0-1); only when both usage and limit are known.", "1", gaugeDouble, deviceAttrs},
	HwGpuTemperature:          {"hw.gpu.temperature", "Device (die) temperature.", "Cel", gaugeDouble, deviceAttrs},
	HwGpuPowerDraw:            {"hw.gpu.power.draw", "Instantaneous power draw.", "W", gaugeDouble, deviceAttrs},
	HwGpuPowerLimit:           {"hw.gpu.power.limit", "Enforced power limit.", "W", gaugeDouble, deviceAttrs},
	HwErrors:                  {"hw.errors", "Hardware errors the device reported (ECC), as the CLI's running total.", "{error}", counterInt, append(append([]string{}, deviceAttrs...), AttrErrorType)},
	HwStatus:                  {"hw.status", "1 for the device's current state and 0 for the others; absent when the CLI shows no health.", "1", upDownInt, append(append([]string{}, deviceAttrs...), AttrState)},
	HwGpuPartitionMemoryLimit: {"hw.gpu.partition.memory.limit", "Memory size of a hardware partition (MIG instance, vNPU, VF, vDCU).", "By", upDownInt, partitionAttrs},
	HwGpuPartitionMemoryUsage: {"hw.gpu.partition.memory.usage", "Memory in use in a hardware partition.", "By", upDownInt, partitionAttrs},
}

// Name is the metric's OpenTelemetry name.
func (id MetricID) Name() string { return defs[id].name }

// Attribute keys (metadata.yaml, attributes section).
const (
	AttrID               = "hw.id"
	AttrType             = "hw.type"
	AttrVendor           = "hw.vendor"
	AttrModel            = "hw.model"
	AttrDriverVersion    = "hw.driver_version"
	AttrFirmwareVersion  = "hw.firmware_version"
	AttrSerialNumber     = "hw.serial_number"
	AttrIndex            = "hw.index"
	AttrBusID            = "hw.bus_id"
	AttrParent           = "hw.parent"
	AttrState            = "hw.state"
	AttrErrorType        = "error.type"
	AttrPartitionKind    = "hw.gpu.partition.kind"
	AttrPartitionID      = "hw.gpu.partition.id"
	AttrPartitionProfile = "hw.gpu.partition.profile"
)

// Values of enum attributes.
const (
	TypeGPU       = "gpu"
	StateOK       = "ok"
	StateDegraded = "degraded"
	StateFailed   = "failed"
	ErrorTypeECC  = "ecc"
)

// States lists hw.state values in the order hw.status reports them.
var States = []string{StateOK, StateDegraded, StateFailed}
