// The console frame: side navigation (brief §8), header with language switch,
// current user and logout, and the routed page in the content area.
import { useState } from 'react';
import { Outlet, useLocation, useNavigate } from 'react-router-dom';
import { Button, Layout, Menu, Select, Space, Tag, Typography } from 'antd';
import type { MenuProps } from 'antd';
import { LineChartOutlined, LogoutOutlined, UserOutlined } from '@ant-design/icons';
import { useTranslation } from 'react-i18next';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { clusters } from '../api/clusters';
import { links } from '../api/endpoints';
import { prom } from '../api/prometheus';
import { logout } from '../api/session';
import { useAuth } from '../auth/AuthContext';
import { atLeast } from '../auth/roles';
import { LANGS, setLang, type Lang } from '../i18n';
import { NAV } from './nav';
import TenantSwitch from './TenantSwitch';
import ClusterSwitch from './ClusterSwitch';

const { Header, Sider, Content } = Layout;

export default function MainLayout() {
  const { t, i18n } = useTranslation();
  const { user } = useAuth();
  const navigate = useNavigate();
  const location = useLocation();
  const queryClient = useQueryClient();
  const [collapsed, setCollapsed] = useState(false);

  // The metrics explorer needs the server's Prometheus-compatible API; probe
  // it once so the entry is enabled only where that API answers.
  const promProbe = useQuery({
    queryKey: ['capability', 'prometheus'],
    queryFn: prom.buildinfo,
    staleTime: Infinity,
    meta: { inlineErrors: true },
  });
  // A Grafana link in the header when the server has grafana_url configured;
  // the console's own charts stay.
  const linkQuery = useQuery({
    queryKey: ['settings', 'links'],
    queryFn: links.get,
    staleTime: Infinity,
    meta: { inlineErrors: true },
  });
  const grafanaURL = linkQuery.data?.grafana_url;
  // Only registered pages are listed, and the explorer only where the
  // server's Prometheus-compatible API answers: every entry works.
  // Clusters only on a hub: a server that is not one answers 404.
  const hubProbe = useQuery({ queryKey: ['clusters'], queryFn: clusters.list, retry: false, meta: { inlineErrors: true } });
  const capable = { prometheus: promProbe.isSuccess, hub: hubProbe.isSuccess };
  const available = (n: (typeof NAV)[number]) => !!n.page && !n.hidden && (!n.needs || capable[n.needs]);

  const items: MenuProps['items'] = NAV.filter((n) => available(n) && atLeast(user?.role, n.minRole)).map((n) => ({
    key: n.path,
    icon: n.icon,
    label: <span data-testid={`nav-${n.key}`}>{t(`nav.${n.key}`)}</span>,
  }));
  const selected = NAV.find((n) => location.pathname.startsWith(n.path))?.path;

  const onLogout = async () => {
    const providerLogout = await logout();
    queryClient.clear();
    // The provider's logout page comes back to /login; a client-side
    // navigation now would cancel the browser's trip there.
    if (providerLogout) window.location.assign(providerLogout);
    else navigate('/login', { replace: true });
  };

  return (
    <Layout style={{ minHeight: '100vh' }}>
      <Sider collapsible collapsed={collapsed} onCollapse={setCollapsed} breakpoint="lg" width={208}>
        <div style={{ color: '#fff', fontWeight: 600, fontSize: 18, padding: '16px 24px', whiteSpace: 'nowrap' }}>
          {collapsed ? 'HF' : t('app.name')}
        </div>
        <Menu
          theme="dark"
          mode="inline"
          selectedKeys={selected ? [selected] : []}
          items={items}
          onClick={({ key }) => navigate(key)}
        />
      </Sider>
      <Layout>
        <Header style={{ background: '#fff', padding: '0 24px', display: 'flex', alignItems: 'center', gap: 16 }}>
          <Typography.Text type="secondary" ellipsis style={{ minWidth: 0, flex: '1 1 auto' }} data-testid="app-subtitle">
            {t('app.subtitle')}
          </Typography.Text>
          <Space style={{ marginLeft: 'auto', flex: 'none' }} size="middle" wrap={false}>
            {grafanaURL && (
              <Button
                data-testid="grafana-link"
                icon={<LineChartOutlined />}
                href={grafanaURL}
                target="_blank"
                rel="noopener noreferrer"
              >
                {t('common.grafana')}
              </Button>
            )}
            <ClusterSwitch />
            <TenantSwitch />
            <Select<Lang>
              data-testid="lang-switch"
              aria-label={t('common.language')}
              size="small"
              style={{ width: 110 }}
              value={i18n.language === 'en' ? 'en' : 'zh'}
              options={LANGS}
              onChange={setLang}
            />
            <span data-testid="current-user" title={user?.username} style={{ whiteSpace: 'nowrap' }}>
              <Space size={4} wrap={false}>
                <UserOutlined />
                <Typography.Text strong>{user?.display_name || user?.username}</Typography.Text>
                {user && <Tag>{t(`role.${user.role}`)}</Tag>}
              </Space>
            </span>
            <Button data-testid="logout" icon={<LogoutOutlined />} onClick={onLogout}>
              {t('common.logout')}
            </Button>
          </Space>
        </Header>
        <Content style={{ margin: 24 }}>
          <Outlet />
        </Content>
      </Layout>
    </Layout>
  );
}
