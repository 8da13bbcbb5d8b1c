// The navigation of the product brief §8 plus the metrics explorer. A page
// that is not built yet has no element: its menu entry is disabled with a
// "coming soon" tooltip instead of showing placeholder content.
import type { ReactNode } from 'react';
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
} from '@ant-design/icons';
import type { Role } from '../api/types';
import type { Messages } from '../i18n/en';

export interface NavItem {
  key: keyof Messages['nav'];
  path: string;
  icon: ReactNode;
  built: boolean;
  minRole: Role;
  /** needs names a server capability probed at runtime; without it the entry stays disabled. */
  needs?: 'prometheus';
}

export const NAV: NavItem[] = [
  { key: 'dashboard', path: '/dashboard', icon: <DashboardOutlined />, built: true, minRole: 'viewer' },
  { key: 'nodes', path: '/nodes', icon: <CloudServerOutlined />, built: true, minRole: 'viewer' },
  { key: 'monitoring', path: '/monitoring', icon: <AreaChartOutlined />, built: true, minRole: 'viewer' },
  { key: 'tasks', path: '/tasks', icon: <ProfileOutlined />, built: true, minRole: 'viewer' },
  { key: 'slices', path: '/slices', icon: <PartitionOutlined />, built: true, minRole: 'viewer' },
  { key: 'alerts', path: '/alerts', icon: <AlertOutlined />, built: false, minRole: 'viewer' },
  { key: 'plugins', path: '/plugins', icon: <ApiOutlined />, built: true, minRole: 'operator' },
  { key: 'clusters', path: '/clusters', icon: <ClusterOutlined />, built: false, minRole: 'operator' },
  { key: 'audit', path: '/audit', icon: <FileSearchOutlined />, built: true, minRole: 'operator' },
  { key: 'users', path: '/users', icon: <TeamOutlined />, built: true, minRole: 'admin' },
  { key: 'metrics', path: '/metrics', icon: <LineChartOutlined />, built: true, minRole: 'viewer', needs: 'prometheus' },
];

export const HOME = '/dashboard';
