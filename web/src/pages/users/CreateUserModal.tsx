// Modal form for POST /api/v1/users. The password policy lives on the server;
// its message is shown when it rejects a password.
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { Form, Input, Modal, Select } from 'antd';
import type { FormInstance } from 'antd';
import { useTranslation } from 'react-i18next';
import { users, type NewUser } from '../../api/endpoints';
import { ROLES } from '../../api/types';
import { showSuccess } from '../../components/notify';

/**
 * PasswordRules lists every rule of the server's default policy (10+
 * characters, 3 of 4 character classes, not containing the username) with
 * its state as the user types, so all of them are visible at once; the
 * server stays the judge and names every rule a refused password breaks.
 */
function PasswordRules({ form }: { form: FormInstance<NewUser> }) {
  const { t } = useTranslation();
  const pw: string = Form.useWatch('password', form) ?? '';
  const user: string = Form.useWatch('username', form) ?? '';
  const classes = [/\p{Ll}/u, /\p{Lu}/u, /\p{Nd}/u, /[^\p{Ll}\p{Lu}\p{Nd}]/u].filter((re) => re.test(pw)).length;
  const rules = [
    { key: 'length', ok: [...pw].length >= 10 && [...pw].length <= 256 },
    { key: 'classes', ok: classes >= 3 },
    { key: 'username', ok: !user.trim() || !pw.toLowerCase().includes(user.trim().toLowerCase()) },
  ];
  return (
    <ul data-testid="password-rules" style={{ margin: '4px 0 0', paddingLeft: 18 }}>
      {rules.map((r) => (
        <li key={r.key} data-rule={r.key} data-ok={pw ? String(r.ok) : 'unknown'} style={{ color: !pw ? undefined : r.ok ? '#389e0d' : '#cf1322' }}>
          {t(`users.rules.${r.key}`)}
        </li>
      ))}
    </ul>
  );
}

export default function CreateUserModal({ open, onClose }: { open: boolean; onClose: () => void }) {
  const { t } = useTranslation();
  const [form] = Form.useForm<NewUser>();
  const qc = useQueryClient();
  const create = useMutation({
    mutationFn: (u: NewUser) => users.create(u),
    onSuccess: (u) => {
      showSuccess(t('users.created', { name: u.username }));
      void qc.invalidateQueries({ queryKey: ['users'] });
      form.resetFields();
      onClose();
    },
  });

  const submit = async () => {
    const v = await form.validateFields();
    const body: NewUser = { username: v.username.trim(), password: v.password, role: v.role };
    for (const k of ['display_name', 'email', 'tenant'] as const) {
      const s = v[k]?.trim();
      if (s) body[k] = s;
    }
    create.mutate(body);
  };

  return (
    <Modal
      open={open}
      title={t('users.new')}
      okText={t('common.create')}
      cancelText={t('common.cancel')}
      confirmLoading={create.isPending}
      onOk={submit}
      onCancel={onClose}
      destroyOnHidden
    >
      <Form<NewUser> form={form} layout="vertical" initialValues={{ role: 'user' }} preserve={false}>
        <Form.Item name="username" label={t('users.username')} rules={[{ required: true, whitespace: true, message: t('login.required') }]}>
          <Input autoComplete="off" data-testid="user-username" />
        </Form.Item>
        <Form.Item
          name="password"
          label={t('users.password')}
          extra={<PasswordRules form={form} />}
          rules={[{ required: true, message: t('login.required') }]}
        >
          <Input.Password autoComplete="new-password" data-testid="user-password" />
        </Form.Item>
        <Form.Item name="role" label={t('users.role')} rules={[{ required: true }]}>
          <Select options={ROLES.map((r) => ({ value: r, label: t(`role.${r}`) }))} />
        </Form.Item>
        <Form.Item name="display_name" label={t('users.displayName')}>
          <Input />
        </Form.Item>
        <Form.Item name="email" label={t('users.email')} rules={[{ type: 'email' }]}>
          <Input />
        </Form.Item>
        <Form.Item name="tenant" label={t('users.tenant')}>
          <Input />
        </Form.Item>
      </Form>
    </Modal>
  );
}
