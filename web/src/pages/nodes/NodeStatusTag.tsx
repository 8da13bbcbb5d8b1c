// The node's console status: online / offline / cordoned / draining.
import { Tag } from 'antd';
import { useTranslation } from 'react-i18next';
import { nodeStatus, type HFNode } from '../../api/nodes';

const COLORS = { online: 'green', offline: 'default', cordoned: 'orange', draining: 'volcano' } as const;

export default function NodeStatusTag({ node }: { node: Pick<HFNode, 'state' | 'cordoned' | 'draining'> }) {
  const { t } = useTranslation();
  const s = nodeStatus(node);
  return (
    <Tag color={COLORS[s]} data-testid="node-status" data-status={s}>
      {t(`nodes.statusName.${s}`)}
    </Tag>
  );
}
