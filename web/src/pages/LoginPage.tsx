// Login page: username + password against POST /api/v1/auth/login. Refused
// logins (one answer for wrong password, unknown user and lockout), rate
// limits and an unavailable store are shown in the console's language by
// their stable error code; anything else with the server's message.
import { useEffect, useState } from 'react';
import { Navigate, useLocation, useNavigate } from 'react-router-dom';
import { Alert, Button, Card, Divider, Form, Input, Select, Space, Typography } from 'antd';
import { LockOutlined, LoginOutlined, UserOutlined } from '@ant-design/icons';
import { useTranslation } from 'react-i18next';
import { login, ssoProviders, type SSOProvider } from '../api/session';
import { useAuth } from '../auth/AuthContext';
import { errorText } from '../components/notify';
import { codedText } from '../i18n/codes';
import { ApiError } from '../api/http';
import i18nInstance, { LANGS, setLang, type Lang } from '../i18n';
import { HOME } from '../layout/nav';

interface Values {
  username: string;
  password: string;
}

export default function LoginPage() {
  const { t, i18n } = useTranslation();
  const { user, ready } = useAuth();
  const navigate = useNavigate();
  const location = useLocation();
  const [error, setError] = useState<string | null>(() => ssoErrorText(location.search));
  const [busy, setBusy] = useState(false);
  const [providers, setProviders] = useState<SSOProvider[]>([]);
  const from = (location.state as { from?: string } | null)?.from ?? HOME;

  useEffect(() => {
    let live = true;
    ssoProviders().then(
      (ps) => live && setProviders(ps),
      () => {}, // no buttons when the list cannot be read; password sign-in still works
    );
    return () => {
      live = false;
    };
  }, []);

  if (ready && user) return <Navigate to={from} replace />;

  const onFinish = async (v: Values) => {
    setBusy(true);
    setError(null);
    try {
      await login(v.username, v.password);
      navigate(from, { replace: true });
    } catch (err) {
      setError(loginErrorText(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <div style={{ minHeight: '100vh', display: 'flex', alignItems: 'center', justifyContent: 'center', background: '#f0f2f5' }}>
      <Card style={{ width: 380 }}>
        <Space direction="vertical" size="large" style={{ width: '100%' }}>
          <div style={{ display: 'flex', alignItems: 'center' }}>
            <Typography.Title level={3} style={{ margin: 0 }}>
              {t('login.title')}
            </Typography.Title>
            <Select<Lang>
              data-testid="lang-switch"
              size="small"
              style={{ marginLeft: 'auto', width: 100 }}
              value={i18n.language === 'en' ? 'en' : 'zh'}
              options={LANGS}
              onChange={setLang}
            />
          </div>
          {error && <Alert type="error" showIcon message={error} data-testid="login-error" />}
          <Form<Values> layout="vertical" onFinish={onFinish} requiredMark={false}>
            <Form.Item name="username" label={t('login.username')} rules={[{ required: true, message: t('login.required') }]}>
              <Input prefix={<UserOutlined />} autoComplete="username" autoFocus />
            </Form.Item>
            <Form.Item name="password" label={t('login.password')} rules={[{ required: true, message: t('login.required') }]}>
              <Input.Password prefix={<LockOutlined />} autoComplete="current-password" />
            </Form.Item>
            <Button type="primary" htmlType="submit" block loading={busy} data-testid="login-submit">
              {t('login.submit')}
            </Button>
          </Form>
          {providers.length > 0 && (
            <>
              <Divider plain style={{ margin: 0 }}>
                {t('sso.or')}
              </Divider>
              <Space direction="vertical" style={{ width: '100%' }}>
                {providers.map((p) => (
                  <Button
                    key={p.name}
                    block
                    icon={<LoginOutlined />}
                    data-testid={`sso-${p.name}`}
                    onClick={() => window.location.assign(`${p.start_url}?${new URLSearchParams({ return_to: from })}`)}
                  >
                    {t('sso.signInWith', { name: p.display_name })}
                  </Button>
                ))}
              </Space>
            </>
          )}
        </Space>
      </Card>
    </div>
  );
}

/** loginErrorText translates the login answers a user meets by error code. */
function loginErrorText(err: unknown): string {
  const t = i18nInstance.t.bind(i18nInstance);
  if (err instanceof ApiError) {
    switch (err.code) {
      case 'unauthenticated':
        return t('login.badCredentials');
      case 'too_many_requests':
        return t('login.tooMany', { seconds: err.retryAfter ?? 1 });
      case 'unavailable':
        return t('login.unavailable');
    }
    const coded = codedText(err.code, err.params);
    if (coded) return coded;
  }
  return errorText(err);
}

/**
 * ssoErrorText is the refusal a single sign-on came back with
 * (/login?sso_error=<code>&sso_<param>=…), in the console's language.
 */
function ssoErrorText(search: string): string | null {
  const q = new URLSearchParams(search);
  const code = q.get('sso_error');
  if (!code) return null;
  const params: Record<string, string> = {};
  q.forEach((v, k) => {
    if (k.startsWith('sso_') && k !== 'sso_error') params[k.slice(4)] = v;
  });
  return codedText(code, params) ?? i18nInstance.t('login.unavailable');
}
