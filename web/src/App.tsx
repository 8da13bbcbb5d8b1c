// Routes: /login outside the frame; every other page inside MainLayout behind
// RequireAuth. Page routes come from the registrations in layout/nav.tsx:
// a registered page gets its route here and its menu entry there.
import { Suspense, type ReactNode } from 'react';
import { Navigate, Route, Routes, useNavigate } from 'react-router-dom';
import { Button, Result, Spin } from 'antd';
import { useTranslation } from 'react-i18next';
import type { Role } from './api/types';
import { RequireAuth, useAuth } from './auth/AuthContext';
import { atLeast } from './auth/roles';
import MainLayout from './layout/MainLayout';
import { HOME, NAV } from './layout/nav';
import LoginPage from './pages/LoginPage';
import SSOFinishPage from './pages/SSOFinishPage';

function RequireRole({ min, children }: { min: Role; children: ReactNode }) {
  const { user } = useAuth();
  const { t } = useTranslation();
  if (!atLeast(user?.role, min)) {
    return <Result status="403" title="403" subTitle={t('common.forbiddenPage', { role: user ? t(`role.${user.role}`) : '' })} />;
  }
  return <>{children}</>;
}

function NotFound() {
  const { t } = useTranslation();
  const navigate = useNavigate();
  return (
    <Result
      status="404"
      title="404"
      subTitle={t('common.notFound')}
      extra={<Button onClick={() => navigate(HOME)}>{t('common.backHome')}</Button>}
    />
  );
}

export default function App() {
  return (
    <Routes>
      <Route path="/login" element={<LoginPage />} />
      <Route path="/login/sso" element={<SSOFinishPage />} />
      <Route
        element={
          <RequireAuth>
            <MainLayout />
          </RequireAuth>
        }
      >
        <Route index element={<Navigate to={HOME} replace />} />
        {NAV.flatMap((n) => {
          const Page = n.page;
          if (!Page) return [];
          const element = (
            <RequireRole min={n.minRole}>
              <Suspense fallback={<Spin />}>
                <Page />
              </Suspense>
            </RequireRole>
          );
          return [n.path, ...(n.subPaths ?? [])].map((p) => <Route key={p} path={p} element={element} />);
        })}
        <Route path="*" element={<NotFound />} />
      </Route>
    </Routes>
  );
}
