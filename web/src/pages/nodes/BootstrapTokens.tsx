// Bootstrap tokens (admin): create one (its secret and the deploy command
// are shown once), list them with their state, revoke unused ones.
import { useState, type HTMLAttributes } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Alert, Button, Card, Form, Input, InputNumber, Modal, Popconfirm, Space, Table, Tag, Typography } from 'antd';
import type { ColumnsType } from 'antd/es/table';
import { PlusOutlined } from '@ant-design/icons';
import { useTranslation } from 'react-i18next';
import { tokensApi, type BootstrapToken } from '../../api/nodes';
import { formatTime } from '../../components/format';
import { errorText, showSuccess } from '../../components/notify';
import { defaultServerURL, deployCommand } from './deployCommand';

interface NewToken {
  description: string;
  ttlHours: number;
}

function CreatedToken({ token }: { token: BootstrapToken }) {
  const { t } = useTranslation();
  const enrollment = useQuery({ queryKey: ['enrollment'], queryFn: tokensApi.enrollment, staleTime: Infinity, meta: { inlineErrors: true } });
  const [edited, setServer] = useState<string | null>(null);
  const server = edited ?? defaultServerURL(window.location, enrollment.data);
  const e = enrollment.data;
  const fingerprint = e?.tls && e.self_signed ? e.server_fingerprint : undefined;
  const pubkeyPin = e?.tls && e.self_signed ? e.server_pubkey_pin : undefined;
  const cmd = deployCommand(window.location.origin, server.trim(), token.token ?? '', fingerprint, pubkeyPin);
  return (
    <Space direction="vertical" style={{ width: '100%' }}>
      <Alert type="warning" showIcon message={t('nodes.tokens.once')} />
      <Typography.Text strong>{t('nodes.tokens.token')}</Typography.Text>
      <Typography.Paragraph copyable={{ text: token.token }} code data-testid="token-secret">
        {token.token}
      </Typography.Paragraph>
      <Typography.Text strong>{t('nodes.tokens.serverURL')}</Typography.Text>
      <Input value={server} onChange={(ev) => setServer(ev.target.value)} data-testid="token-server-url" />
      {fingerprint && (
        <Alert
          type="info"
          showIcon
          data-testid="token-fingerprint"
          message={t('nodes.tokens.selfSigned')}
          description={<Typography.Text code copyable>{fingerprint}</Typography.Text>}
        />
      )}
      <Typography.Text strong>{t('nodes.tokens.command')}</Typography.Text>
      <Typography.Paragraph copyable={{ text: cmd }} code data-testid="token-command" style={{ wordBreak: 'break-all' }}>
        {cmd}
      </Typography.Paragraph>
    </Space>
  );
}

export default function BootstrapTokens() {
  const { t } = useTranslation();
  const qc = useQueryClient();
  const [form] = Form.useForm<NewToken>();
  const [creating, setCreating] = useState(false);
  const [created, setCreated] = useState<BootstrapToken | null>(null);
  const list = useQuery({ queryKey: ['bootstrap-tokens'], queryFn: tokensApi.list, refetchInterval: 15_000 });

  const create = useMutation({
    mutationFn: (v: NewToken) => tokensApi.create(v.description?.trim() ?? '', Math.round(v.ttlHours * 3600)),
    onSuccess: (tok) => {
      setCreating(false);
      setCreated(tok);
      form.resetFields();
      showSuccess(t('nodes.tokens.created'));
      void qc.invalidateQueries({ queryKey: ['bootstrap-tokens'] });
    },
    onError: () => {}, // shown inline in the form
  });
  const revoke = useMutation({
    mutationFn: (tok: BootstrapToken) => tokensApi.revoke(tok.id),
    onSuccess: () => {
      showSuccess(t('nodes.tokens.revoked'));
      void qc.invalidateQueries({ queryKey: ['bootstrap-tokens'] });
    },
  });

  const now = Date.now();
  const columns: ColumnsType<BootstrapToken> = [
    { title: t('nodes.tokens.prefix'), dataIndex: 'prefix', width: 140, render: (p: string) => <Typography.Text code>{p}…</Typography.Text> },
    { title: t('nodes.tokens.description'), dataIndex: 'description', ellipsis: true },
    { title: t('nodes.tokens.createdAt'), dataIndex: 'created_at', width: 180, render: formatTime },
    { title: t('nodes.tokens.expiresAt'), dataIndex: 'expires_at', width: 180, render: formatTime },
    {
      title: t('nodes.tokens.usedBy'),
      key: 'used',
      width: 180,
      render: (_, tok) =>
        tok.used_at ? (
          <Typography.Text>{tok.node_id || formatTime(tok.used_at)}</Typography.Text>
        ) : new Date(tok.expires_at).getTime() < now ? (
          <Tag>{t('nodes.tokens.expired')}</Tag>
        ) : (
          <Tag color="blue">{t('nodes.tokens.unused')}</Tag>
        ),
    },
    {
      title: t('common.actions'),
      key: 'actions',
      width: 100,
      render: (_, tok) => (
        <Popconfirm
          title={t('nodes.tokens.confirmRevoke', { prefix: tok.prefix })}
          okText={t('common.yes')}
          cancelText={t('common.no')}
          onConfirm={() => revoke.mutateAsync(tok)}
        >
          <Button size="small" type="link" danger data-testid="token-revoke">
            {t('nodes.tokens.revoke')}
          </Button>
        </Popconfirm>
      ),
    },
  ];

  return (
    <Card
      title={t('nodes.tokens.title')}
      data-testid="tokens-card"
      extra={
        <Button type="primary" icon={<PlusOutlined />} onClick={() => setCreating(true)} data-testid="token-new">
          {t('nodes.tokens.new')}
        </Button>
      }
    >
      <Typography.Paragraph type="secondary">{t('nodes.tokens.help')}</Typography.Paragraph>
      {list.error && <Alert type="error" showIcon message={errorText(list.error)} />}
      <Table<BootstrapToken>
        rowKey="id"
        size="small"
        columns={columns}
        dataSource={list.data?.items ?? []}
        loading={list.isPending}
        pagination={{ pageSize: 10, hideOnSinglePage: true }}
        onRow={(tok) => ({ 'data-testid': 'token-row', 'data-prefix': tok.prefix }) as HTMLAttributes<HTMLElement>}
      />
      <Modal
        open={creating}
        title={t('nodes.tokens.new')}
        okText={t('common.create')}
        cancelText={t('common.cancel')}
        confirmLoading={create.isPending}
        onOk={() => form.submit()}
        onCancel={() => setCreating(false)}
        destroyOnHidden
      >
        <Form<NewToken> form={form} layout="vertical" initialValues={{ ttlHours: 24, description: '' }} onFinish={(v) => create.mutate(v)}>
          <Form.Item name="description" label={t('nodes.tokens.description')} rules={[{ max: 256 }]}>
            <Input data-testid="token-description" maxLength={256} />
          </Form.Item>
          <Form.Item name="ttlHours" label={t('nodes.tokens.ttl')} rules={[{ required: true }]}>
            <InputNumber min={0.01} max={720} step={1} data-testid="token-ttl" style={{ width: 160 }} />
          </Form.Item>
          {create.error && <Alert type="error" showIcon message={errorText(create.error)} data-testid="token-error" />}
        </Form>
      </Modal>
      <Modal
        open={created !== null}
        title={t('nodes.tokens.created')}
        onCancel={() => setCreated(null)}
        footer={
          <Button type="primary" onClick={() => setCreated(null)} data-testid="token-done">
            {t('nodes.tokens.close')}
          </Button>
        }
        width={720}
        destroyOnHidden
      >
        {created && <CreatedToken token={created} />}
      </Modal>
    </Card>
  );
}
