// The dashboard's active alert counts by level (open = ACTIVE or
// ACKNOWLEDGED), each a link to the Alerts page filtered on it.
import { useQueries } from '@tanstack/react-query';
import { Card, Col, Row, Statistic } from 'antd';
import { Link } from 'react-router-dom';
import { useTranslation } from 'react-i18next';
import { ALERT_LEVELS, alertsApi } from '../../api/alerts';

const COLORS = { INFO: '#1677ff', WARN: '#fa8c16', ERROR: '#f5222d' };

export default function ActiveAlertsCard() {
  const { t } = useTranslation();
  const counts = useQueries({
    queries: ALERT_LEVELS.map((level) => ({
      queryKey: ['alerts', 'open-count', level],
      queryFn: () => alertsApi.list({ level, state: 'ACTIVE,ACKNOWLEDGED', limit: 1 }),
      refetchInterval: 10_000,
    })),
  });
  return (
    <Card size="small" title={<Link to="/alerts">{t('alerts.dashCard')}</Link>} data-testid="dash-alerts">
      <Row>
        {ALERT_LEVELS.map((level, i) => (
          <Col span={8} key={level}>
            <Statistic
              title={t(`alerts.levels.${level}`)}
              value={counts[i].data?.total ?? '—'}
              valueStyle={{ color: COLORS[level] }}
              valueRender={(n) => <span data-testid={`dash-alerts-${level}`}>{n}</span>}
            />
          </Col>
        ))}
      </Row>
    </Card>
  );
}
