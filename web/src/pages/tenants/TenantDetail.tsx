// One tenant's members and projects. The server decides who may change
// them (cluster admins and the tenant's admins); refusals show its reason.
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Button, Card, Form, Input, Popconfirm, Select, Space, Switch, Table, Typography } from 'antd';
import type { ColumnsType } from 'antd/es/table';
import { useTranslation } from 'react-i18next';
import { TENANT_ROLES, tenants, type Member, type Project, type TenantRole } from '../../api/tenants';
import { formatTime } from '../../components/format';
import { showError, showSuccess } from '../../components/notify';

export default function TenantDetail({ tenant }: { tenant: string }) {
  const { t } = useTranslation();
  const qc = useQueryClient();
  const members = useQuery({ queryKey: ['tenants', tenant, 'members'], queryFn: () => tenants.members(tenant) });
  const projects = useQuery({ queryKey: ['tenants', tenant, 'projects'], queryFn: () => tenants.projects(tenant) });
  const [mform] = Form.useForm<{ username: string; role: TenantRole }>();
  const [pform] = Form.useForm<{ name: string; display_name?: string }>();
  const roleOptions = TENANT_ROLES.map((r) => ({ value: r, label: t(`ten.roles.${r}`) }));
  const refresh = () => void qc.invalidateQueries({ queryKey: ['tenants', tenant] });

  const put = useMutation({
    mutationFn: ({ user, role }: { user: string; role: TenantRole }) => tenants.putMember(tenant, user, role),
    onSuccess: (m) => {
      showSuccess(t('ten.memberAdded', { user: m.username, role: t(`ten.roles.${m.role}`) }));
      mform.resetFields(['username']);
      refresh();
    },
    onError: showError,
  });
  const remove = useMutation({
    mutationFn: (user: string) => tenants.removeMember(tenant, user),
    onSuccess: (_, user) => {
      showSuccess(t('ten.memberRemoved', { user }));
      refresh();
    },
    onError: showError,
  });
  const createProject = useMutation({
    mutationFn: (v: { name: string; display_name?: string }) => tenants.createProject(tenant, { name: v.name.trim(), display_name: v.display_name?.trim() || undefined }),
    onSuccess: (p) => {
      showSuccess(t('ten.projectCreated', { name: p.name }));
      pform.resetFields();
      refresh();
    },
    onError: showError,
  });
  const updateProject = useMutation({
    mutationFn: ({ name, patch }: { name: string; patch: { display_name?: string; disabled?: boolean } }) => tenants.updateProject(tenant, name, patch),
    onSuccess: (p) => {
      showSuccess(t('ten.projectUpdated', { name: p.name }));
      refresh();
    },
    onError: showError,
  });

  const memberColumns: ColumnsType<Member> = [
    { title: t('ten.username'), dataIndex: 'username', render: (v: string) => <span data-testid="member-name">{v}</span> },
    {
      title: t('ten.role'),
      dataIndex: 'role',
      width: 170,
      render: (role: TenantRole, m) => (
        <Select<TenantRole>
          data-testid="member-role"
          size="small"
          style={{ width: 150 }}
          value={role}
          options={roleOptions}
          onChange={(next) => put.mutate({ user: m.username, role: next })}
        />
      ),
    },
    { title: t('ten.since'), dataIndex: 'since', width: 180, render: formatTime },
    {
      title: t('common.actions'),
      key: 'actions',
      width: 100,
      render: (_, m) => (
        <Popconfirm
          title={t('ten.confirmRemove', { user: m.username, tenant })}
          okText={t('common.yes')}
          cancelText={t('common.no')}
          onConfirm={() => remove.mutateAsync(m.username)}
        >
          <Button size="small" type="link" danger data-testid="member-remove">
            {t('ten.remove')}
          </Button>
        </Popconfirm>
      ),
    },
  ];
  const projectColumns: ColumnsType<Project> = [
    { title: t('ten.project'), dataIndex: 'name', render: (v: string) => <span data-testid="project-name">{v}</span> },
    {
      title: t('ten.displayName'),
      dataIndex: 'display_name',
      render: (v: string, p) => (
        <Typography.Text editable={{ onChange: (next) => next !== v && updateProject.mutate({ name: p.name, patch: { display_name: next } }) }}>{v}</Typography.Text>
      ),
    },
    {
      title: t('ten.status'),
      dataIndex: 'disabled',
      width: 130,
      render: (off: boolean, p) => (
        <Switch
          data-testid="project-enabled"
          checked={!off}
          checkedChildren={t('ten.enabled')}
          unCheckedChildren={t('ten.disabled')}
          onChange={(on) => updateProject.mutate({ name: p.name, patch: { disabled: !on } })}
        />
      ),
    },
  ];

  return (
    <Space direction="vertical" size="large" style={{ width: '100%' }} data-testid="tenant-detail">
      <Card title={t('ten.members', { name: tenant })}>
        <Form form={mform} layout="inline" initialValues={{ role: 'member' }} onFinish={(v) => put.mutate({ user: v.username.trim(), role: v.role })} style={{ marginBottom: 16 }}>
          <Form.Item name="username" label={t('ten.username')} rules={[{ required: true }]}>
            <Input data-testid="member-username" style={{ width: 160 }} />
          </Form.Item>
          <Form.Item name="role" label={t('ten.role')}>
            <Select data-testid="member-new-role" style={{ width: 150 }} options={roleOptions} />
          </Form.Item>
          <Form.Item>
            <Button type="primary" htmlType="submit" data-testid="member-add" loading={put.isPending}>
              {t('ten.addMember')}
            </Button>
          </Form.Item>
        </Form>
        <Table<Member> rowKey="user_id" size="small" data-testid="member-table" columns={memberColumns} dataSource={members.data ?? []} pagination={false} />
      </Card>
      <Card title={t('ten.projects', { name: tenant })}>
        <Form form={pform} layout="inline" onFinish={(v) => createProject.mutate(v)} style={{ marginBottom: 16 }}>
          <Form.Item name="name" label={t('ten.project')} rules={[{ required: true }]}>
            <Input data-testid="project-new-name" style={{ width: 160 }} />
          </Form.Item>
          <Form.Item name="display_name" label={t('ten.displayName')}>
            <Input style={{ width: 160 }} />
          </Form.Item>
          <Form.Item>
            <Button type="primary" htmlType="submit" data-testid="project-add" loading={createProject.isPending}>
              {t('ten.addProject')}
            </Button>
          </Form.Item>
        </Form>
        <Table<Project> rowKey="name" size="small" data-testid="project-table" columns={projectColumns} dataSource={projects.data ?? []} pagination={false} />
      </Card>
    </Space>
  );
}
