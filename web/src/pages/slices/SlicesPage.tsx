// GPU slices (GET /slices): the cluster fragmentation score and device state
// counts, then every device grouped by node with its allocation bar and its
// slices (task, QoS, memory, compute, isolation, draining), and the
// defragmentation planner. Refreshes every three seconds.
import { useQuery } from '@tanstack/react-query';
import { Alert, Badge, Card, Col, Empty, Row, Space, Statistic, Table, Tag, Typography } from 'antd';
import { Link } from 'react-router-dom';
import { useTranslation } from 'react-i18next';
import { sched, type Device, type DeviceState, type Slice } from '../../api/scheduling';
import { errorText } from '../../components/notify';
import DefragPanel from './DefragPanel';
import DeviceBar from './DeviceBar';
import QosTag from './QosTag';

const STATE_COLORS: Record<DeviceState, string> = { free: 'green', fragmented: 'orange', allocated: 'blue' };

function SliceTable({ slices }: { slices: Slice[] }) {
  const { t } = useTranslation();
  return (
    <Table<Slice>
      size="small"
      pagination={false}
      rowKey={(s) => `${s.task_id}-${s.attempt}`}
      dataSource={slices}
      columns={[
        {
          title: t('sched.slices.task'),
          dataIndex: 'task_id',
          render: (id: number) => (
            <Link to={`/tasks/${id}`} data-testid="slice-task">
              #{id}
            </Link>
          ),
        },
        { title: t('sched.slices.qos'), dataIndex: 'qos', render: (q) => <QosTag qos={q} /> },
        { title: t('sched.slices.memory'), dataIndex: 'memory_mib', render: (m: number) => `${m} MiB` },
        { title: t('sched.slices.compute'), dataIndex: 'compute_percent', render: (c: number) => `${c}%` },
        {
          title: t('sched.slices.isolation'),
          render: (_, s) => (
            <>
              <Typography.Text code>{s.isolation}</Typography.Text>
              {s.profile && <Tag>{s.profile}</Tag>}
            </>
          ),
        },
        { title: t('sched.slices.tenant'), render: (_, s) => [s.tenant, s.project].filter(Boolean).join(' / ') || '—' },
        { title: t('sched.slices.priority'), dataIndex: 'priority' },
        {
          title: t('sched.slices.draining'),
          dataIndex: 'draining',
          render: (d: boolean) => (d ? <Tag color="orange">{t('sched.slices.draining')}</Tag> : '—'),
        },
      ]}
    />
  );
}

function DeviceRow({ d }: { d: Device }) {
  const { t } = useTranslation();
  return (
    <div data-testid="device" data-node={d.node} data-index={d.index} data-state={d.state} style={{ marginBottom: 16 }}>
      <Space wrap style={{ marginBottom: 4 }}>
        <Typography.Text strong>
          #{d.index} {d.model}
        </Typography.Text>
        <Tag color={STATE_COLORS[d.state]} data-testid="device-state">
          {t(`sched.deviceState.${d.state}`)}
        </Tag>
        <Typography.Text type="secondary">
          {t('sched.slices.deviceLine', {
            alloc: d.allocated_compute_percent,
            free: d.free_compute_percent,
            mem: d.allocated_memory_mib,
            total: d.memory_mib,
          })}
        </Typography.Text>
      </Space>
      <DeviceBar device={d} />
      {(d.slices ?? []).length > 0 && (
        <div style={{ marginTop: 8 }}>
          <SliceTable slices={d.slices} />
        </div>
      )}
    </div>
  );
}

export default function SlicesPage() {
  const { t } = useTranslation();
  const { data, error } = useQuery({ queryKey: ['slices'], queryFn: sched.slices, refetchInterval: 3_000, meta: { inlineErrors: true } });
  const byNode = new Map<string, Device[]>();
  for (const d of data?.items ?? []) byNode.set(d.node, [...(byNode.get(d.node) ?? []), d]);
  return (
    <Space direction="vertical" size="large" style={{ width: '100%' }}>
      {error && <Alert type="error" showIcon message={errorText(error)} />}
      <Card title={t('sched.slices.title')}>
        <Row gutter={16}>
          <Col span={6}>
            <Statistic
              title={t('sched.slices.score')}
              value={data ? (data.fragmentation_score * 100).toFixed(1) : '—'}
              suffix={data ? '%' : undefined}
              valueRender={(node) => (
                <span data-testid="frag-score" data-score={data?.fragmentation_score}>
                  {node}
                </span>
              )}
            />
            <Typography.Text type="secondary">{t('sched.slices.scoreHint')}</Typography.Text>
          </Col>
          {(['free', 'fragmented', 'allocated'] as const).map((s) => (
            <Col span={6} key={s}>
              <Statistic
                title={<Badge color={STATE_COLORS[s]} text={t(`sched.deviceState.${s}`)} />}
                value={data?.devices?.[s] ?? 0}
                valueRender={(node) => <span data-testid={`devices-${s}`}>{node}</span>}
              />
            </Col>
          ))}
        </Row>
      </Card>
      {data && !(data.items ?? []).length && <Empty description={t('sched.slices.noDevices')} />}
      {[...byNode.entries()].map(([node, devs]) => (
        <Card
          key={node}
          size="small"
          data-testid="slice-node"
          title={
            <Space>
              <Badge status={devs[0].online ? 'success' : 'default'} />
              <span>{devs[0].hostname || node}</span>
              <Typography.Text type="secondary" copyable={{ text: node }}>
                {node}
              </Typography.Text>
              <Tag>{devs[0].vendor}</Tag>
            </Space>
          }
        >
          {devs.map((d) => (
            <DeviceRow key={`${d.node}-${d.index}`} d={d} />
          ))}
        </Card>
      ))}
      <DefragPanel />
    </Space>
  );
}
