// QoS tier tag, coloured the same everywhere (slices page, bars, task detail).
import { Tag } from 'antd';
import { useTranslation } from 'react-i18next';
import type { QoS } from '../../api/scheduling';

export const QOS_COLORS: Record<QoS, string> = { gold: '#d4a017', silver: '#8c8c8c', bronze: '#b87333' };

export default function QosTag({ qos }: { qos?: QoS }) {
  const { t } = useTranslation();
  const q = qos ?? 'bronze';
  return (
    <Tag color={QOS_COLORS[q]} data-qos={q}>
      {t(`sched.qos.${q}`, { defaultValue: q })}
    </Tag>
  );
}
