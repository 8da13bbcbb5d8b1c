// Users (admin): list with role/status/keyword filters, create with a role,
// approve pending registrations, change role or status inline, delete.
import { useState } from 'react';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { Button, Card, Form, Input, Popconfirm, Select, Space, Table, Tag, Typography } from 'antd';
import type { ColumnsType } from 'antd/es/table';
import { PlusOutlined } from '@ant-design/icons';
import { useTranslation } from 'react-i18next';
import { users, type UserFilter, type UserPatch } from '../../api/endpoints';
import { ROLES, USER_STATUSES, type Role, type User, type UserStatus } from '../../api/types';
import { useAuth } from '../../auth/AuthContext';
import { formatTime } from '../../components/format';
import { usePagedList } from '../../components/usePagedList';
import { showSuccess } from '../../components/notify';
import CreateUserModal from './CreateUserModal';
import RegistrationSwitch from './RegistrationSwitch';

type Filter = Omit<UserFilter, 'limit' | 'offset'>;

export default function UsersPage() {
  const { t } = useTranslation();
  const { user: me } = useAuth();
  const qc = useQueryClient();
  const [form] = Form.useForm<Filter>();
  const [creating, setCreating] = useState(false);

  const { data, isFetching, apply: applyFilter, pagination } = usePagedList<Filter, User>('users', users.list);

  const done = (key: string) => (u: User | void, vars: { user: User }) => {
    showSuccess(t(key, { name: u?.username ?? vars.user.username }));
    void qc.invalidateQueries({ queryKey: ['users'] });
  };
  const update = useMutation({
    mutationFn: ({ user, patch }: { user: User; patch: UserPatch }) => users.update(user.id, patch),
    onSuccess: done('users.updated'),
  });
  const approve = useMutation({ mutationFn: ({ user }: { user: User }) => users.approve(user.id), onSuccess: done('users.approved') });
  const remove = useMutation({ mutationFn: ({ user }: { user: User }) => users.remove(user.id), onSuccess: done('users.deleted') });

  const columns: ColumnsType<User> = [
    {
      title: t('users.username'),
      dataIndex: 'username',
      render: (name: string, u) => (
        <Space>
          <Typography.Text data-testid="user-row-name">{name}</Typography.Text>
          {u.id === me?.id && <Tag color="blue">{t('users.self')}</Tag>}
          {u.auth_source && (
            <Tag color="purple" data-testid="user-source">
              {u.auth_source === 'ldap' ? t('sso.sourceLdap') : t('sso.sourceOidc', { provider: u.auth_source.replace(/^oidc:/, '') })}
            </Tag>
          )}
        </Space>
      ),
    },
    { title: t('users.displayName'), dataIndex: 'display_name', render: (v) => v || '—' },
    { title: t('users.email'), dataIndex: 'email', render: (v) => v || '—' },
    {
      title: t('users.role'),
      dataIndex: 'role',
      width: 140,
      render: (role: Role, u) => (
        <Select<Role>
          data-testid="user-role"
          size="small"
          style={{ width: 120 }}
          value={role}
          disabled={u.id === me?.id}
          options={ROLES.map((r) => ({ value: r, label: t(`role.${r}`) }))}
          onChange={(next) => update.mutate({ user: u, patch: { role: next } })}
        />
      ),
    },
    {
      title: t('users.status'),
      dataIndex: 'status',
      width: 140,
      render: (status: UserStatus, u) =>
        status === 'pending' ? (
          <Tag color="gold">{t('userStatus.pending')}</Tag>
        ) : (
          <Select<UserStatus>
            size="small"
            style={{ width: 120 }}
            value={status}
            disabled={u.id === me?.id}
            options={(['active', 'disabled'] as UserStatus[]).map((s) => ({ value: s, label: t(`userStatus.${s}`) }))}
            onChange={(next) => update.mutate({ user: u, patch: { status: next } })}
          />
        ),
    },
    { title: t('users.tenant'), dataIndex: 'tenant', render: (v) => v || '—' },
    { title: t('users.createdAt'), dataIndex: 'created_at', width: 180, render: formatTime },
    {
      title: t('common.actions'),
      key: 'actions',
      width: 170,
      render: (_, u) => (
        <Space>
          {u.status === 'pending' && (
            <Button size="small" type="link" onClick={() => approve.mutate({ user: u })} data-testid="user-approve">
              {t('users.approve')}
            </Button>
          )}
          {u.id !== me?.id && (
            <Popconfirm
              title={t('users.confirmDelete', { name: u.username })}
              okText={t('common.yes')}
              cancelText={t('common.no')}
              onConfirm={() => remove.mutateAsync({ user: u })}
            >
              <Button size="small" type="link" danger data-testid="user-delete">
                {t('common.delete')}
              </Button>
            </Popconfirm>
          )}
        </Space>
      ),
    },
  ];

  const apply = (v: Filter) =>
    applyFilter({ role: v.role || undefined, status: v.status || undefined, q: v.q?.trim() || undefined });

  return (
    <Card
      title={t('users.title')}
      extra={
        <Space size="large">
          <RegistrationSwitch />
          <Button type="primary" icon={<PlusOutlined />} onClick={() => setCreating(true)} data-testid="user-new">
            {t('users.new')}
          </Button>
        </Space>
      }
    >
      <Form<Filter> form={form} layout="inline" onFinish={apply} style={{ marginBottom: 16, rowGap: 8 }}>
        <Form.Item name="role" label={t('users.role')}>
          <Select allowClear style={{ width: 140 }} placeholder={t('common.all')} options={ROLES.map((r) => ({ value: r, label: t(`role.${r}`) }))} />
        </Form.Item>
        <Form.Item name="status" label={t('users.status')}>
          <Select
            allowClear
            style={{ width: 140 }}
            placeholder={t('common.all')}
            options={USER_STATUSES.map((s) => ({ value: s, label: t(`userStatus.${s}`) }))}
          />
        </Form.Item>
        <Form.Item name="q" label={t('common.keyword')}>
          <Input allowClear placeholder={t('users.searchPlaceholder')} style={{ width: 200 }} />
        </Form.Item>
        <Form.Item>
          <Space>
            <Button type="primary" htmlType="submit" data-testid="user-search">
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
      <Table<User>
        rowKey="id"
        size="middle"
        columns={columns}
        dataSource={data?.items ?? []}
        loading={isFetching && !data}
        pagination={pagination}
      />
      <CreateUserModal open={creating} onClose={() => setCreating(false)} />
    </Card>
  );
}
