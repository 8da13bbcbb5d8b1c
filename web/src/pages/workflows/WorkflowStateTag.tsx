// Coloured, translated tag for a workflow or step state.
import { Tag } from 'antd';
import { useTranslation } from 'react-i18next';
import type { StepState, WorkflowState } from '../../api/workflows';

const colors: Record<StepState, string> = {
  pending: 'default',
  running: 'processing',
  succeeded: 'success',
  failed: 'error',
  cancelled: 'default',
  skipped: 'default',
};

export default function WorkflowStateTag({ state }: { state: WorkflowState | StepState }) {
  const { t } = useTranslation();
  return (
    <Tag color={colors[state] ?? 'default'} data-testid="wf-state" data-state={state}>
      {t(`wfState.${state}`, { defaultValue: state })}
    </Tag>
  );
}
