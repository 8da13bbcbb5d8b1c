// Alerts (brief §6 智能告警, §8 告警管理): alert instances with filters and
// acknowledge/resolve, statistics, the rules (built-in thresholds and the
// custom rule editor with "test now"), silences and notification channels.
// The tab is kept in the URL (?tab=) so a link opens the same view.
import type { ReactElement } from 'react';
import { Card, Tabs } from 'antd';
import { useSearchParams } from 'react-router-dom';
import { useTranslation } from 'react-i18next';
import AlertsTab from './AlertsTab';
import StatsTab from './StatsTab';
import RulesTab from './RulesTab';
import SilencesTab from './SilencesTab';
import ChannelsTab from './ChannelsTab';

const TABS = ['alerts', 'stats', 'rules', 'silences', 'channels'] as const;
type Tab = (typeof TABS)[number];

export default function AlertsPage() {
  const { t } = useTranslation();
  const [params, setParams] = useSearchParams();
  const tab: Tab = (TABS as readonly string[]).includes(params.get('tab') ?? '') ? (params.get('tab') as Tab) : 'alerts';
  const body: Record<Tab, ReactElement> = {
    alerts: <AlertsTab />,
    stats: <StatsTab />,
    rules: <RulesTab />,
    silences: <SilencesTab />,
    channels: <ChannelsTab />,
  };
  return (
    <Card title={t('alerts.title')}>
      <Tabs
        activeKey={tab}
        onChange={(k) => setParams({ tab: k })}
        destroyOnHidden
        items={TABS.map((k) => ({ key: k, label: <span data-testid={`alerts-tab-${k}`}>{t(`alerts.tabs.${k}`)}</span>, children: body[k] }))}
      />
    </Card>
  );
}
