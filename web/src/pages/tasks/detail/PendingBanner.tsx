// Banner at the top of a waiting task's detail: its last reason and the
// one-line summary of its last scheduling cycle, with a link to the full
// "why pending" tab. Shares the why query with WhyPending.
import { useQuery } from '@tanstack/react-query';
import { Alert, Button } from 'antd';
import { useTranslation } from 'react-i18next';
import { sched } from '../../../api/scheduling';

export default function PendingBanner({ taskId, reason, onDetails }: { taskId: number; reason?: string; onDetails: () => void }) {
  const { t } = useTranslation();
  const { data } = useQuery({
    queryKey: ['task', taskId, 'why'],
    queryFn: () => sched.why(taskId),
    refetchInterval: 2_000,
    meta: { inlineErrors: true },
  });
  const summary = data?.last_attempt?.summary;
  return (
    <Alert
      type="warning"
      showIcon
      data-testid="task-pending-reason"
      message={t('sched.detail.waiting')}
      description={
        <>
          <div>{reason || '—'}</div>
          {summary && <div data-testid="task-pending-summary">{summary}</div>}
          {data?.last_attempt?.quota && <div>{data.last_attempt.quota}</div>}
        </>
      }
      action={
        <Button size="small" onClick={onDetails} data-testid="task-pending-details">
          {t('sched.detail.why')}
        </Button>
      }
    />
  );
}
