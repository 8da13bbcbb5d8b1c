// Task output (GET /tasks/{id}/logs): stdout and stderr of one attempt,
// read incrementally by offset and followed every two seconds while the
// task runs. Output is rendered as text in a <pre>, never as HTML.
import { useEffect, useState } from 'react';
import { Alert, Select, Space, Tabs, Typography } from 'antd';
import { useTranslation } from 'react-i18next';
import { sched } from '../../../api/scheduling';
import { errorText } from '../../../components/notify';

const KEEP = 1 << 20; // keep the last MiB in the page

function useLogStream(taskId: number, stream: 'stdout' | 'stderr', attempt: number, live: boolean) {
  const [text, setText] = useState('');
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    let stopped = false;
    let busy = false;
    let offset = 0;
    let buf = '';
    setText('');
    async function poll() {
      if (busy) return;
      busy = true;
      try {
        // Drain what the server has (it answers in chunks), then wait.
        for (let i = 0; i < 32; i++) {
          const r = await sched.logs(taskId, stream, offset, attempt);
          if (stopped) return;
          if (!r.data) break;
          buf = (buf + r.data).slice(-KEEP);
          offset = r.next;
          setText(buf);
        }
        setError(null);
      } catch (err) {
        if (!stopped) setError(errorText(err));
      } finally {
        busy = false;
      }
    }
    void poll();
    const timer = live ? window.setInterval(() => void poll(), 2_000) : undefined;
    return () => {
      stopped = true;
      if (timer) window.clearInterval(timer);
    };
  }, [taskId, stream, attempt, live]);
  return { text, error };
}

function LogView({ taskId, stream, attempt, live }: { taskId: number; stream: 'stdout' | 'stderr'; attempt: number; live: boolean }) {
  const { t } = useTranslation();
  const { text, error } = useLogStream(taskId, stream, attempt, live);
  return (
    <>
      {error && <Alert type="error" showIcon message={error} style={{ marginBottom: 8 }} />}
      <pre
        data-testid={`task-log-${stream}`}
        style={{ maxHeight: 420, overflow: 'auto', background: '#141414', color: '#e8e8e8', padding: 12, borderRadius: 6, margin: 0 }}
      >
        {text || t('sched.logs.empty')}
      </pre>
    </>
  );
}

export default function TaskLogs({ taskId, currentAttempt, live }: { taskId: number; currentAttempt: number; live: boolean }) {
  const { t } = useTranslation();
  const [attempt, setAttempt] = useState(currentAttempt);
  useEffect(() => setAttempt(currentAttempt), [currentAttempt]);
  const follow = live && attempt === currentAttempt;
  return (
    <Space direction="vertical" style={{ width: '100%' }}>
      <Space>
        <Typography.Text>{t('sched.logs.attempt')}</Typography.Text>
        <Select
          size="small"
          value={attempt}
          style={{ width: 100 }}
          onChange={setAttempt}
          options={Array.from({ length: currentAttempt + 1 }, (_, i) => ({ value: i, label: `#${i}` }))}
        />
        {follow && <Typography.Text type="secondary">{t('sched.logs.following')}</Typography.Text>}
      </Space>
      <Tabs
        size="small"
        items={(['stdout', 'stderr'] as const).map((s) => ({
          key: s,
          label: <span data-testid={`task-log-tab-${s}`}>{s}</span>,
          children: <LogView taskId={taskId} stream={s} attempt={attempt} live={follow} />,
        }))}
      />
    </Space>
  );
}
