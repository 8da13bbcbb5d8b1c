// Coloured tag for a task state, translated.
import { Tag } from 'antd';
import { useTranslation } from 'react-i18next';
import type { TaskState } from '../../api/types';

const colors: Record<TaskState, string> = {
  submitted: 'default',
  queued: 'gold',
  scheduled: 'cyan',
  running: 'processing',
  succeeded: 'success',
  failed: 'error',
  cancelled: 'default',
  timed_out: 'warning',
};

export default function TaskStateTag({ state }: { state: TaskState }) {
  const { t } = useTranslation();
  return (
    <Tag color={colors[state] ?? 'default'} data-testid="task-state" data-state={state}>
      {t(`taskState.${state}`, { defaultValue: state })}
    </Tag>
  );
}
