import { Tag } from 'antd';
import { useTranslation } from 'react-i18next';
import type { AlertLevel, AlertState } from '../../api/alerts';

const levelColor: Record<AlertLevel, string> = { INFO: 'blue', WARN: 'orange', ERROR: 'red' };
const stateColor: Record<AlertState, string> = { ACTIVE: 'red', ACKNOWLEDGED: 'gold', RESOLVED: 'green' };

export function LevelTag({ level }: { level: AlertLevel }) {
  const { t } = useTranslation();
  return <Tag color={levelColor[level] ?? 'default'}>{t(`alerts.levels.${level}`, { defaultValue: level })}</Tag>;
}

export function StateTag({ state }: { state: AlertState }) {
  const { t } = useTranslation();
  return (
    <Tag color={stateColor[state] ?? 'default'} data-testid="alert-state">
      {t(`alerts.states.${state}`, { defaultValue: state })}
    </Tag>
  );
}

/** summary picks the annotation in the console's language. */
export function summaryOf(ann: Record<string, string>, lang: string): string {
  return (lang.startsWith('zh') ? ann.summary_zh || ann.summary : ann.summary || ann.summary_zh) || ann.description || '';
}

export function formatSeconds(s: number): string {
  if (!s) return '—';
  if (s < 60) return `${Math.round(s)}s`;
  if (s < 3600) return `${Math.round(s / 60)}m`;
  return `${(s / 3600).toFixed(1)}h`;
}
