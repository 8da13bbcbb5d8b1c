// Audit log (brief §6): filter by module, level, actor, time range and
// keyword; server-side pagination. Detail text is shown as plain text.
import { useState } from 'react';
import { Button, Card, Checkbox, DatePicker, Form, Input, Select, Space, Table, Tag, Typography } from 'antd';
import type { ColumnsType } from 'antd/es/table';
import type { Dayjs } from 'dayjs';
import type { TFunction } from 'i18next';
import { useTranslation } from 'react-i18next';
import { audit, type AuditFilter } from '../../api/endpoints';
import { AUDIT_LEVELS, AUDIT_MODULES, type AuditEntry, type AuditLevel } from '../../api/types';
import { formatTime, PAGE_SIZES, rangeQuery } from '../../components/format';
import { usePagedList } from '../../components/usePagedList';
import { serverText } from '../../i18n/server';

interface FilterValues {
  module?: string;
  level?: string;
  actor?: string;
  q?: string;
  range?: [Dayjs | null, Dayjs | null] | null;
}

type Filter = Omit<AuditFilter, 'limit' | 'offset'>;

const levelColor: Record<AuditLevel, string> = { DEBUG: 'default', INFO: 'blue', WARN: 'orange', ERROR: 'red' };

const ROUTINE = new Set(['auth.apikey', 'auth.refresh']);

/** isRoutine: a successful API-key authentication or token refresh. */
function isRoutine(e: AuditEntry): boolean {
  return ROUTINE.has(e.action) && e.result === 'ok';
}

export default function AuditPage() {
  const { t } = useTranslation();
  const [form] = Form.useForm<FilterValues>();
  const { data, isFetching, refetch, apply: applyFilter, pagination } = usePagedList<Filter, AuditEntry>('audit', audit.list, {
    pageSize: PAGE_SIZES[1],
  });

  // Routine entries (successful API-key use and token refreshes by agents
  // and open consoles) are hidden by default; failures always show.
  const [hideRoutine, setHideRoutine] = useState(true);
  const items = data?.items ?? [];
  const shown = hideRoutine ? items.filter((e) => !isRoutine(e)) : items;
  const hidden = items.length - shown.length;
  const columns: ColumnsType<AuditEntry> = [
    { title: t('audit.at'), dataIndex: 'at', width: 180, render: formatTime },
    { title: t('audit.actor'), dataIndex: 'actor', width: 130 },
    {
      title: t('audit.module'),
      dataIndex: 'module',
      width: 100,
      render: (m: string) => t(`module.${m}`, { defaultValue: m }),
    },
    {
      title: t('audit.level'),
      dataIndex: 'level',
      width: 90,
      render: (l: AuditLevel) => <Tag color={levelColor[l] ?? 'default'}>{l}</Tag>,
    },
    { title: t('audit.action'), dataIndex: 'action', width: 160, render: (a: string) => <Typography.Text code>{a}</Typography.Text> },
    { title: t('audit.target'), dataIndex: 'target', ellipsis: true, render: (v: string) => <span data-testid="audit-target">{v}</span> },
    { title: t('audit.sourceIp'), dataIndex: 'source_ip', width: 130 },
    {
      title: t('audit.result'),
      dataIndex: 'result',
      width: 140,
      ellipsis: true,
      render: (r: string) => {
        const { text, type } = resultView(r, t);
        return (
          <Typography.Text type={type} data-testid="audit-result" data-result={r} title={text}>
            {text}
          </Typography.Text>
        );
      },
    },
    { title: t('audit.detail'), dataIndex: 'detail', ellipsis: true, render: (d?: string) => d || '—' },
  ];

  const apply = (v: FilterValues) =>
    applyFilter({
      module: v.module || undefined,
      level: v.level || undefined,
      actor: v.actor?.trim() || undefined,
      q: v.q?.trim() || undefined,
      ...rangeQuery(v.range),
    });

  return (
    <Card title={t('audit.title')} extra={<Button onClick={() => refetch()}>{t('common.refresh')}</Button>}>
      <Form<FilterValues> form={form} layout="inline" onFinish={apply} style={{ marginBottom: 16, rowGap: 8 }}>
        <Form.Item name="module" label={t('audit.module')}>
          <Select
            allowClear
            style={{ width: 130 }}
            placeholder={t('common.all')}
            options={AUDIT_MODULES.map((m) => ({ value: m, label: t(`module.${m}`) }))}
          />
        </Form.Item>
        <Form.Item name="level" label={t('audit.level')}>
          <Select allowClear style={{ width: 110 }} placeholder={t('common.all')} options={AUDIT_LEVELS.map((l) => ({ value: l, label: l }))} />
        </Form.Item>
        <Form.Item name="actor" label={t('audit.actor')}>
          <Input allowClear style={{ width: 130 }} />
        </Form.Item>
        <Form.Item name="q" label={t('common.keyword')}>
          <Input allowClear placeholder={t('audit.searchPlaceholder')} style={{ width: 220 }} data-testid="audit-q" />
        </Form.Item>
        <Form.Item name="range" label={t('common.timeRange')}>
          <DatePicker.RangePicker showTime allowEmpty={[true, true]} />
        </Form.Item>
        <Form.Item>
          <Space>
            <Button type="primary" htmlType="submit" data-testid="audit-search">
              {t('common.search')}
            </Button>
            <Button
              onClick={() => {
                form.resetFields();
                apply({});
              }}
            >
              {t('common.reset')}
            </Button>
          </Space>
        </Form.Item>
      </Form>
      <Space style={{ marginBottom: 8 }}>
        <Checkbox checked={hideRoutine} onChange={(e) => setHideRoutine(e.target.checked)} data-testid="audit-hide-routine">
          {t('audit.hideRoutine')}
        </Checkbox>
        {hideRoutine && hidden > 0 && (
          <Typography.Text type="secondary" data-testid="audit-hidden-count">
            {t('audit.hiddenCount', { n: hidden })}
          </Typography.Text>
        )}
      </Space>
      <Table<AuditEntry>
        rowKey="id"
        size="small"
        columns={columns}
        dataSource={shown}
        loading={isFetching && !data}
        pagination={pagination}
      />
    </Card>
  );
}

// resultView is an audit result in the console's language: "ok", "denied:
// <message>" and "failed: <message>" (the server's English message
// translated where known), and the scheduler's outcomes, which are neither
// success nor failure and so are not shown in red.
function resultView(r: string, t: TFunction): { text: string; type?: 'success' | 'danger' | 'warning' } {
  const m = r.match(/^(denied|failed): (.*)$/s);
  if (m) return { text: t('audit.withReason', { result: t(`audit.results.${m[1]}`), reason: serverText(m[2]) }), type: 'danger' };
  const text = t(`audit.results.${r}`, { defaultValue: r });
  if (r === 'ok') return { text, type: 'success' };
  if (r === 'unschedulable') return { text, type: 'warning' };
  return { text };
}
