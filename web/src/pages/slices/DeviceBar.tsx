// A device's compute as a horizontal bar: one segment per slice (width =
// its compute %, colour = QoS), the free rest grey. Segments are plain
// divs with a text tooltip so task data stays text.
import { Tooltip } from 'antd';
import { useTranslation } from 'react-i18next';
import type { Device } from '../../api/scheduling';
import { QOS_COLORS } from './QosTag';

export default function DeviceBar({ device }: { device: Device }) {
  const { t } = useTranslation();
  const free = Math.max(0, Math.min(100, device.free_compute_percent));
  return (
    <div
      data-testid="device-bar"
      data-state={device.state}
      style={{ display: 'flex', height: 14, width: '100%', borderRadius: 4, overflow: 'hidden', background: '#f0f0f0' }}
      role="img"
      aria-label={t('sched.slices.barLabel', { used: 100 - free, free })}
    >
      {device.slices.map((s, i) => (
        <Tooltip
          key={`${s.task_id}-${i}`}
          title={`#${s.task_id} · ${t(`sched.qos.${s.qos}`)} · ${s.compute_percent}% · ${s.memory_mib} MiB · ${s.isolation}`}
        >
          <div
            style={{
              width: `${Math.min(100, s.compute_percent)}%`,
              background: QOS_COLORS[s.qos] ?? '#999',
              borderRight: '1px solid #fff',
              opacity: s.draining ? 0.45 : 1,
            }}
          />
        </Tooltip>
      ))}
    </div>
  );
}
