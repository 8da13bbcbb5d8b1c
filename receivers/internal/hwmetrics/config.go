package hwmetrics

// MetricConfig switches one metric on or off.
type MetricConfig struct {
	Enabled bool `mapstructure:"enabled"`
}

// MetricsConfig has one switch per metric, keyed by the metric name as in
// metadata.yaml, so a receiver config reads
//
//	metrics:
//	  hw.gpu.power.limit:
//	    enabled: false
type MetricsConfig struct {
	HwGpuUtilization          MetricConfig `mapstructure:"hw.gpu.utilization"`
	HwGpuMemoryUsage          MetricConfig `mapstructure:"hw.gpu.memory.usage"`
	HwGpuMemoryLimit          MetricConfig `mapstructure:"hw.gpu.memory.limit"`
	HwGpuMemoryUtilization    MetricConfig `mapstructure:"hw.gpu.memory.utilization"`
	HwGpuTemperature          MetricConfig `mapstructure:"hw.gpu.temperature"`
	HwGpuPowerDraw            MetricConfig `mapstructure:"hw.gpu.power.draw"`
	HwGpuPowerLimit           MetricConfig `mapstructure:"hw.gpu.power.limit"`
	HwErrors                  MetricConfig `mapstructure:"hw.errors"`
	HwStatus                  MetricConfig `mapstructure:"hw.status"`
	HwGpuPartitionMemoryLimit MetricConfig `mapstructure:"hw.gpu.partition.memory.limit"`
	HwGpuPartitionMemoryUsage MetricConfig `mapstructure:"hw.gpu.partition.memory.usage"`
}

// MetricsBuilderConfig is what a receiver config embeds (squashed).
type MetricsBuilderConfig struct {
	Metrics MetricsConfig `mapstructure:"metrics"`
}

// DefaultMetricsBuilderConfig enables every metric (metadata.yaml: enabled: true).
func DefaultMetricsBuilderConfig() MetricsBuilderConfig {
	on := MetricConfig{Enabled: true}
	return MetricsBuilderConfig{Metrics: MetricsConfig{
		HwGpuUtilization: on, HwGpuMemoryUsage: on, HwGpuMemoryLimit: on, HwGpuMemoryUtilization: on,
		HwGpuTemperature: on, HwGpuPowerDraw: on, HwGpuPowerLimit: on, HwErrors: on, HwStatus: on,
		HwGpuPartitionMemoryLimit: on, HwGpuPartitionMemoryUsage: on,
	}}
}

// enabled lists the switches in MetricID order.
func (c MetricsConfig) enabled() [numMetrics]bool {
	return [numMetrics]bool{
		c.HwGpuUtilization.Enabled, c.HwGpuMemoryUsage.Enabled, c.HwGpuMemoryLimit.Enabled,
		c.HwGpuMemoryUtilization.Enabled, c.HwGpuTemperature.Enabled, c.HwGpuPowerDraw.Enabled,
		c.HwGpuPowerLimit.Enabled, c.HwErrors.Enabled, c.HwStatus.Enabled,
		c.HwGpuPartitionMemoryLimit.Enabled, c.HwGpuPartitionMemoryUsage.Enabled,
	}
}
