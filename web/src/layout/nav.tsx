// The navigation of the product brief §8 plus the metrics explorer, and the
// one place pages are registered: an entry with a page gets its route (see
// App.tsx) and its menu entry; an entry without one is absent from the menu
// and has no route. Adding a page is one line here:
//   page: lazy(() => import('../pages/alerts/AlertsPage')),
// Every page is loaded lazily, so the bundle is split by route.
import { lazy, type ComponentType, type LazyExoticComponent, type ReactNode } from 'react';
import {
  AlertOutlined,
  ApiOutlined,
  ClusterOutlined,
  DashboardOutlined,
  FileSearchOutlined,
  LineChartOutlined,
  PartitionOutlined,
  ProfileOutlined,
  TeamOutlined,
  CloudServerOutlined,
  AreaChartOutlined,
  ApartmentOutlined,
  AccountBookOutlined,
  BankOutlined,
  FundOutlined,
  KeyOutlined,
} from '@ant-design/icons';
import type { Role } from '../api/types';
import type { Messages } from '../i18n/en';

export interface NavItem {
  key: keyof Messages['nav'];
  path: string;
  icon: ReactNode;
  minRole: Role;
  /** page is the routed element; without it the entry is not shown. */
  page?: LazyExoticComponent<ComponentType>;
  /** subPaths are more routes of the same page (e.g. '/tasks/:id'). */
  subPaths?: string[];
  /** needs names a server capability probed at runtime; without it the entry is not shown. */
  needs?: 'prometheus' | 'hub';
  /** hidden pages have a route but no menu entry. */
  hidden?: boolean;
}

export const NAV: NavItem[] = [
  { key: 'dashboard', path: '/dashboard', icon: <DashboardOutlined />, minRole: 'viewer', page: lazy(() => import('../pages/dashboard/DashboardPage')) },
  { key: 'nodes', path: '/nodes', icon: <CloudServerOutlined />, minRole: 'viewer', page: lazy(() => import('../pages/nodes/NodesPage')) },
  { key: 'monitoring', path: '/monitoring', icon: <AreaChartOutlined />, minRole: 'viewer', page: lazy(() => import('../pages/nodes/MonitoringPage')) },
  { key: 'tasks', path: '/tasks', icon: <ProfileOutlined />, minRole: 'viewer', page: lazy(() => import('../pages/tasks/TasksPage')), subPaths: ['/tasks/:id'] },
  { key: 'workflows', path: '/workflows', icon: <ApartmentOutlined />, minRole: 'viewer', page: lazy(() => import('../pages/workflows/WorkflowsPage')), subPaths: ['/workflows/:id'] },
  { key: 'slices', path: '/slices', icon: <PartitionOutlined />, minRole: 'viewer', page: lazy(() => import('../pages/slices/SlicesPage')) },
  { key: 'alerts', path: '/alerts', icon: <AlertOutlined />, minRole: 'viewer', page: lazy(() => import('../pages/alerts/AlertsPage')) },
  { key: 'plugins', path: '/plugins', icon: <ApiOutlined />, minRole: 'operator', page: lazy(() => import('../pages/plugins/PluginsPage')) },
  { key: 'clusters', path: '/clusters', icon: <ClusterOutlined />, minRole: 'operator', needs: 'hub', page: lazy(() => import('../pages/clusters/ClustersPage')) },
  { key: 'audit', path: '/audit', icon: <FileSearchOutlined />, minRole: 'operator', page: lazy(() => import('../pages/audit/AuditPage')) },
  { key: 'users', path: '/users', icon: <TeamOutlined />, minRole: 'admin', page: lazy(() => import('../pages/users/UsersPage')) },
  { key: 'apikeys', path: '/apikeys', icon: <KeyOutlined />, minRole: 'operator', page: lazy(() => import('../pages/apikeys/ApiKeysPage')) },
  { key: 'tenants', path: '/tenants', icon: <BankOutlined />, minRole: 'viewer', page: lazy(() => import('../pages/tenants/TenantsPage')) },
  { key: 'quotas', path: '/quotas', icon: <FundOutlined />, minRole: 'viewer', page: lazy(() => import('../pages/quotas/QuotasPage')) },
  { key: 'billing', path: '/billing', icon: <AccountBookOutlined />, minRole: 'viewer', page: lazy(() => import('../pages/billing/BillingPage')) },
  { key: 'metrics', path: '/metrics', icon: <LineChartOutlined />, minRole: 'viewer', needs: 'prometheus', page: lazy(() => import('../pages/metrics/MetricsPage')) },
];

export const HOME = '/dashboard';
