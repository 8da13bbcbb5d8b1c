// /login/sso: where the server sends the browser after an OpenID provider
// signed the user in. It redeems the one-use hand-off cookie for the
// session and goes on to the page the sign-in started from.
import { useEffect, useState } from 'react';
import { Link, useNavigate, useSearchParams } from 'react-router-dom';
import { Alert, Card, Space, Spin } from 'antd';
import { useTranslation } from 'react-i18next';
import { redeemSSO } from '../api/session';
import { ApiError } from '../api/http';
import { codedText } from '../i18n/codes';
import { errorText } from '../components/notify';
import { HOME } from '../layout/nav';

/** safeReturn keeps a path of this site only, never another origin. */
export function safeReturn(p: string | null): string {
  if (!p || !p.startsWith('/') || p.startsWith('//') || p.startsWith('/\\') || p.startsWith('/login')) return HOME;
  return p;
}

export default function SSOFinishPage() {
  const { t } = useTranslation();
  const navigate = useNavigate();
  const [params] = useSearchParams();
  const [error, setError] = useState<string | null>(null);
  const target = safeReturn(params.get('return_to'));

  useEffect(() => {
    let live = true;
    redeemSSO().then(
      () => live && navigate(target, { replace: true }),
      (err) => {
        if (!live) return;
        setError(err instanceof ApiError ? (codedText(err.code, err.params) ?? errorText(err)) : errorText(err));
      },
    );
    return () => {
      live = false;
    };
  }, [navigate, target]);

  return (
    <div style={{ minHeight: '100vh', display: 'flex', alignItems: 'center', justifyContent: 'center', background: '#f0f2f5' }}>
      <Card style={{ width: 380 }}>
        {error ? (
          <Space direction="vertical" style={{ width: '100%' }}>
            <Alert type="error" showIcon message={error} data-testid="sso-error" />
            <Link to="/login" replace>
              {t('sso.backToLogin')}
            </Link>
          </Space>
        ) : (
          <Space data-testid="sso-finishing">
            <Spin /> {t('sso.finishing')}
          </Space>
        )}
      </Card>
    </div>
  );
}
