// Routes: /login outside the frame; every other page inside MainLayout behind
// RequireAuth. Only built pages have routes; menu entries of the others are
// disabled (see layout/nav.tsx).
import { lazy, Suspense, type ReactNode } from 'react';
import { Navigate, Route, Routes, useNavigate } from 'react-router-dom';
import { Button, Result, Spin } from 'antd';
import { useTranslation } from 'react-i18next';
import type { Role } from './api/types';
import { RequireAuth, useAuth } from './auth/AuthContext';
import { atLeast } from './auth/roles';
import MainLayout from './layout/MainLayout';
import { HOME } from './layout/nav';
import LoginPage from './pages/LoginPage';
import TasksPage from './pages/tasks/TasksPage';
import UsersPage from './pages/users/UsersPage';
import AuditPage from './pages/audit/AuditPage';
import NodesPage from './pages/nodes/NodesPage';

// ECharts is large: the metrics explorer loads it only when opened.
const MetricsPage = lazy(() => import('./pages/metrics/MetricsPage'));
const SlicesPage = lazy(() => import('./pages/slices/SlicesPage'));
const PluginsPage = lazy(() => import('./pages/plugins/PluginsPage'));
const DashboardPage = lazy(() => import('./pages/dashboard/DashboardPage'));
const MonitoringPage = lazy(() => import('./pages/nodes/MonitoringPage'));

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
      <Route
        element={
          <RequireAuth>
            <MainLayout />
          </RequireAuth>
        }
      >
        <Route index element={<Navigate to={HOME} replace />} />
        <Route
          path="/dashboard"
          element={
            <Suspense fallback={<Spin />}>
              <DashboardPage />
            </Suspense>
          }
        />
        <Route path="/nodes" element={<NodesPage />} />
        <Route
          path="/monitoring"
          element={
            <Suspense fallback={<Spin />}>
              <MonitoringPage />
            </Suspense>
          }
        />
        <Route path="/tasks" element={<TasksPage />} />
        <Route path="/tasks/:id" element={<TasksPage />} />
        <Route
          path="/slices"
          element={
            <Suspense fallback={<Spin />}>
              <SlicesPage />
            </Suspense>
          }
        />
        <Route
          path="/plugins"
          element={
            <RequireRole min="operator">
              <Suspense fallback={<Spin />}>
                <PluginsPage />
              </Suspense>
            </RequireRole>
          }
        />
        <Route
          path="/audit"
          element={
            <RequireRole min="operator">
              <AuditPage />
            </RequireRole>
          }
        />
        <Route
          path="/users"
          element={
            <RequireRole min="admin">
              <UsersPage />
            </RequireRole>
          }
        />
        <Route
          path="/metrics"
          element={
            <Suspense fallback={<Spin />}>
              <MetricsPage />
            </Suspense>
          }
        />
        <Route path="*" element={<NotFound />} />
      </Route>
    </Routes>
  );
}
