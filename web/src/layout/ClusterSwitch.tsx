// The cluster switch in the header, shown only on a hub that has member
// clusters: choosing one focuses the Clusters page on it (and opens it) and
// narrows PromQL (the Metrics explorer, charts) to it; "All clusters" shows
// them side by side and queries every member.
import { Select } from 'antd';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useTranslation } from 'react-i18next';
import { useNavigate } from 'react-router-dom';
import { clusters } from '../api/clusters';
import { setCurrentCluster, useCurrentCluster } from './currentCluster';

const ALL = '\u0000all';

export default function ClusterSwitch() {
  const { t } = useTranslation();
  const navigate = useNavigate();
  const qc = useQueryClient();
  const current = useCurrentCluster();
  // A server that is not a hub answers 404: no switch, no error toast.
  const list = useQuery({ queryKey: ['clusters'], queryFn: clusters.list, retry: false, meta: { inlineErrors: true } });
  const members = list.data ?? [];
  if (members.length === 0) return null;
  const value = members.some((m) => m.name === current) ? current : ALL;
  return (
    <Select<string>
      data-testid="cluster-switch"
      aria-label={t('clu.switchLabel')}
      size="small"
      style={{ width: 160 }}
      value={value}
      options={[{ value: ALL, label: t('clu.switchAll') }, ...members.map((m) => ({ value: m.name, label: m.name }))]}
      onChange={(v) => {
        setCurrentCluster(v === ALL ? '' : v);
        void qc.invalidateQueries({ queryKey: ['promql'] });
        navigate('/clusters');
      }}
    />
  );
}
