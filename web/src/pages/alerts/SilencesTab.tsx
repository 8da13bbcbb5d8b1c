// Silences: label matchers (as in Alertmanager) and a time window; matching
// alerts are still recorded but send no notification.
import { useState } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Button, DatePicker, Form, Input, Modal, Table, Tag } from 'antd';
import type { ColumnsType } from 'antd/es/table';
import dayjs, { type Dayjs } from 'dayjs';
import { useTranslation } from 'react-i18next';
import { alertsApi, type Matcher, type Silence } from '../../api/alerts';
import { useAuth } from '../../auth/AuthContext';
import { atLeast } from '../../auth/roles';
import { formatTime } from '../../components/format';
import { showError, showSuccess } from '../../components/notify';

const MATCHER = /^\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*(=~|!~|!=|=)\s*"?(.*?)"?\s*$/;

/** parseMatchers reads "label=value" lines; the 1-based number of a bad line is thrown. */
export function parseMatchers(text: string): Matcher[] {
  return text
    .split('\n')
    .map((l, i) => ({ l, i }))
    .filter(({ l }) => l.trim() !== '')
    .map(({ l, i }) => {
      const m = MATCHER.exec(l);
      if (!m) throw i + 1;
      return { name: m[1], op: m[2] as Matcher['op'], value: m[3] };
    });
}

export default function SilencesTab() {
  const { t } = useTranslation();
  const { user } = useAuth();
  const canEdit = atLeast(user?.role, 'operator');
  const qc = useQueryClient();
  const q = useQuery({ queryKey: ['alert-silences'], queryFn: alertsApi.silences });
  const [open, setOpen] = useState(false);
  const [form] = Form.useForm<{ matchers: string; ends: Dayjs; comment?: string }>();
  const create = useMutation({
    mutationFn: alertsApi.createSilence,
    onSuccess: () => {
      showSuccess(t('alerts.silences.created'));
      void qc.invalidateQueries({ queryKey: ['alert-silences'] });
      setOpen(false);
      form.resetFields();
    },
    onError: showError,
  });
  const expire = useMutation({
    mutationFn: alertsApi.expireSilence,
    onSuccess: () => void qc.invalidateQueries({ queryKey: ['alert-silences'] }),
    onError: showError,
  });
  const columns: ColumnsType<Silence> = [
    {
      title: t('alerts.silences.matchers'),
      dataIndex: 'matchers',
      render: (ms: Matcher[]) => ms.map((m) => <Tag key={`${m.name}${m.op}${m.value}`}>{`${m.name}${m.op}"${m.value}"`}</Tag>),
    },
    { title: t('alerts.silences.startsAt'), dataIndex: 'starts_at', width: 170, render: formatTime },
    { title: t('alerts.silences.endsAt'), dataIndex: 'ends_at', width: 170, render: formatTime },
    { title: t('alerts.comment'), dataIndex: 'comment', ellipsis: true },
    { title: t('alerts.state'), dataIndex: 'active', width: 90, render: (a: boolean) => <Tag color={a ? 'green' : 'default'}>{t(a ? 'alerts.silences.active' : 'alerts.silences.expired')}</Tag> },
    {
      title: t('common.actions'),
      key: 'a',
      width: 110,
      render: (_, s) =>
        canEdit &&
        s.active && (
          <Button size="small" onClick={() => expire.mutate(s.id)}>
            {t('alerts.silences.expire')}
          </Button>
        ),
    },
  ];
  return (
    <>
      {canEdit && (
        <Button type="primary" style={{ marginBottom: 12 }} onClick={() => setOpen(true)} data-testid="silence-new">
          {t('alerts.silences.new')}
        </Button>
      )}
      <Table<Silence> rowKey="id" size="small" columns={columns} dataSource={q.data?.items} loading={q.isFetching} data-testid="silences-table" />
      <Modal open={open} title={t('alerts.silences.new')} onCancel={() => setOpen(false)} onOk={() => form.submit()} confirmLoading={create.isPending}>
        <Form
          form={form}
          layout="vertical"
          initialValues={{ ends: dayjs().add(2, 'hour') }}
          onFinish={(v) => {
            try {
              create.mutate({ matchers: parseMatchers(v.matchers), ends_at: v.ends.toISOString(), comment: v.comment });
            } catch (line) {
              form.setFields([{ name: 'matchers', errors: [t('alerts.silences.badMatcher', { line: String(line) })] }]);
            }
          }}
        >
          <Form.Item name="matchers" label={t('alerts.silences.matchers')} extra={t('alerts.silences.matchersHelp')} rules={[{ required: true }]}>
            <Input.TextArea rows={3} placeholder={'host_name=gpu-1\nalertname=~GPU.*'} data-testid="silence-matchers" />
          </Form.Item>
          <Form.Item name="ends" label={t('alerts.silences.endsAt')} rules={[{ required: true }]}>
            <DatePicker showTime />
          </Form.Item>
          <Form.Item name="comment" label={t('alerts.comment')}>
            <Input />
          </Form.Item>
        </Form>
      </Modal>
    </>
  );
}

