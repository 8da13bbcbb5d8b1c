// Task output (GET /tasks/{id}/logs): stdout and stderr of one attempt,
// read incrementally by offset and followed every two seconds while the
// task runs. Following keeps the view scrolled to the newest line (until
// the user scrolls up); search highlights or filters lines; the line limit
// bounds what the page renders; download saves the whole stream from
// offset 0. Output is rendered as text, never as HTML.
import { Fragment, useEffect, useMemo, useRef, useState, type ReactNode } from 'react';
import { Alert, Button, Checkbox, Input, Select, Space, Switch, Tabs, Typography } from 'antd';
import { DownloadOutlined } from '@ant-design/icons';
import { useTranslation } from 'react-i18next';
import { sched } from '../../../api/scheduling';
import { errorText, showError } from '../../../components/notify';

const KEEP = 4 << 20; // keep the last 4 MiB in the page
const LIMITS = [500, 2000, 10000, 0] as const; // 0 = all

type Stream = 'stdout' | 'stderr';

function useLogStream(taskId: number, stream: Stream, attempt: number, live: boolean) {
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
        for (let i = 0; i < 64; i++) {
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

/** downloadAll reads the stream from offset 0 to its end and saves it as a file. */
async function downloadAll(taskId: number, stream: Stream, attempt: number) {
  const parts: string[] = [];
  let offset = 0;
  for (;;) {
    const r = await sched.logs(taskId, stream, offset, attempt);
    if (!r.data) break;
    parts.push(r.data);
    offset = r.next;
  }
  const url = URL.createObjectURL(new Blob(parts, { type: 'text/plain;charset=utf-8' }));
  const a = document.createElement('a');
  a.href = url;
  a.download = `task-${taskId}-attempt-${attempt}-${stream}.log`;
  document.body.appendChild(a);
  a.click();
  a.remove();
  window.setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

function highlight(line: string, q: string): ReactNode {
  if (!q) return line;
  const out: ReactNode[] = [];
  const lower = line.toLowerCase();
  const needle = q.toLowerCase();
  let at = 0;
  for (let i = lower.indexOf(needle); i >= 0; i = lower.indexOf(needle, at)) {
    out.push(line.slice(at, i), <mark key={i}>{line.slice(i, i + q.length)}</mark>);
    at = i + q.length;
  }
  out.push(line.slice(at));
  return out;
}

function LogView({ taskId, stream, attempt, live }: { taskId: number; stream: Stream; attempt: number; live: boolean }) {
  const { t } = useTranslation();
  const [follow, setFollow] = useState(true);
  const [query, setQuery] = useState('');
  const [onlyMatches, setOnlyMatches] = useState(false);
  const [limit, setLimit] = useState<number>(2000);
  const [downloading, setDownloading] = useState(false);
  const { text, error } = useLogStream(taskId, stream, attempt, live);
  const pre = useRef<HTMLPreElement>(null);

  const lines = useMemo(() => {
    const all = text ? text.replace(/\n$/, '').split('\n') : [];
    return all;
  }, [text]);
  const q = query.trim();
  const matching = useMemo(() => (q ? lines.filter((l) => l.toLowerCase().includes(q.toLowerCase())).length : 0), [lines, q]);
  const visible = useMemo(() => {
    const base = q && onlyMatches ? lines.filter((l) => l.toLowerCase().includes(q.toLowerCase())) : lines;
    return limit > 0 && base.length > limit ? { shown: base.slice(-limit), total: base.length } : { shown: base, total: base.length };
  }, [lines, q, onlyMatches, limit]);

  // Following: keep the newest line in view after each update.
  useEffect(() => {
    if (live && follow && pre.current) pre.current.scrollTop = pre.current.scrollHeight;
  }, [visible, live, follow]);

  const onScroll = () => {
    const el = pre.current;
    if (!el || !live) return;
    const atBottom = el.scrollHeight - el.scrollTop - el.clientHeight < 24;
    if (!atBottom && follow) setFollow(false); // the user scrolled up to read
  };

  const onDownload = async () => {
    setDownloading(true);
    try {
      await downloadAll(taskId, stream, attempt);
    } catch (err) {
      showError(err);
    } finally {
      setDownloading(false);
    }
  };

  return (
    <Space direction="vertical" style={{ width: '100%' }}>
      <Space wrap>
        {live && (
          <Space size={4}>
            <Switch size="small" checked={follow} onChange={setFollow} data-testid={`task-log-follow-${stream}`} />
            <Typography.Text>{t('sched.logs.follow')}</Typography.Text>
          </Space>
        )}
        <Input.Search
          allowClear
          size="small"
          placeholder={t('sched.logs.search')}
          style={{ width: 240 }}
          value={query}
          onChange={(e) => setQuery(e.target.value)}
          data-testid={`task-log-search-${stream}`}
        />
        {q && (
          <Typography.Text type="secondary" data-testid={`task-log-matches-${stream}`}>
            {t('sched.logs.matches', { n: matching })}
          </Typography.Text>
        )}
        <Checkbox checked={onlyMatches} onChange={(e) => setOnlyMatches(e.target.checked)} data-testid={`task-log-only-${stream}`}>
          {t('sched.logs.onlyMatches')}
        </Checkbox>
        <Space size={4}>
          <Typography.Text>{t('sched.logs.limit')}</Typography.Text>
          <Select
            size="small"
            value={limit}
            onChange={setLimit}
            style={{ width: 90 }}
            data-testid={`task-log-limit-${stream}`}
            options={LIMITS.map((n) => ({ value: n, label: n ? String(n) : t('sched.logs.all') }))}
          />
        </Space>
        <Button size="small" icon={<DownloadOutlined />} loading={downloading} onClick={onDownload} data-testid={`task-log-download-${stream}`}>
          {downloading ? t('sched.logs.downloading') : t('sched.logs.download')}
        </Button>
      </Space>
      {error && <Alert type="error" showIcon message={error} />}
      {visible.total > visible.shown.length && (
        <Typography.Text type="secondary" data-testid={`task-log-truncated-${stream}`}>
          {t('sched.logs.truncated', { shown: visible.shown.length, total: visible.total })}
        </Typography.Text>
      )}
      <pre
        ref={pre}
        onScroll={onScroll}
        data-testid={`task-log-${stream}`}
        style={{ maxHeight: 420, overflow: 'auto', background: '#141414', color: '#e8e8e8', padding: 12, borderRadius: 6, margin: 0 }}
      >
        {visible.shown.length
          ? visible.shown.map((l, i) => (
              <Fragment key={i}>
                {highlight(l, q)}
                {'\n'}
              </Fragment>
            ))
          : t('sched.logs.empty')}
      </pre>
    </Space>
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
