// The DAG of a workflow as SVG: step instances in columns by dependency
// depth, nodes coloured by state, edges styled by condition (success solid,
// failure red dashed, always grey dotted). Clicking a node that has a task
// calls onSelect. Names and reasons are rendered as text nodes only.
import { useMemo } from 'react';
import { useTranslation } from 'react-i18next';
import type { StepState, WorkflowEdge, WorkflowStep } from '../../api/workflows';

const W = 170;
const H = 44;
const GAP_X = 70;
const GAP_Y = 18;
const PAD = 16;

export const STEP_COLORS: Record<StepState, { stroke: string; fill: string }> = {
  pending: { stroke: '#bfbfbf', fill: '#fafafa' },
  running: { stroke: '#1677ff', fill: '#e6f4ff' },
  succeeded: { stroke: '#52c41a', fill: '#f6ffed' },
  failed: { stroke: '#ff4d4f', fill: '#fff1f0' },
  cancelled: { stroke: '#8c8c8c', fill: '#f0f0f0' },
  skipped: { stroke: '#d9d9d9', fill: '#ffffff' },
};

const EDGE_STYLE: Record<WorkflowEdge['on'], { stroke: string; dash?: string }> = {
  success: { stroke: '#8c8c8c' },
  failure: { stroke: '#ff4d4f', dash: '6 4' },
  always: { stroke: '#bfbfbf', dash: '2 4' },
};

interface Placed {
  step: WorkflowStep;
  x: number;
  y: number;
}

/** layout places steps in columns by their longest dependency path. */
function layout(steps: WorkflowStep[], edges: WorkflowEdge[]) {
  const preds = new Map<string, string[]>();
  for (const e of edges) preds.set(e.to, [...(preds.get(e.to) ?? []), e.from]);
  const depth = new Map<string, number>();
  // Steps come in dependency order from the server, so predecessors are placed first.
  for (const s of steps) {
    const d = Math.max(-1, ...(preds.get(s.name) ?? []).map((p) => depth.get(p) ?? 0)) + 1;
    depth.set(s.name, d);
  }
  const rows: number[] = [];
  const placed = new Map<string, Placed>();
  for (const s of steps) {
    const d = depth.get(s.name) ?? 0;
    const r = rows[d] ?? 0;
    rows[d] = r + 1;
    placed.set(s.name, { step: s, x: PAD + d * (W + GAP_X), y: PAD + r * (H + GAP_Y) });
  }
  const cols = rows.length;
  const maxRows = Math.max(1, ...rows.map((r) => r ?? 0));
  return { placed, width: PAD * 2 + cols * W + Math.max(0, cols - 1) * GAP_X, height: PAD * 2 + maxRows * H + (maxRows - 1) * GAP_Y };
}

function short(s: string, n = 22) {
  return s.length > n ? `${s.slice(0, n - 1)}…` : s;
}

export default function DagGraph({
  steps,
  edges,
  onSelect,
}: {
  steps: WorkflowStep[];
  edges: WorkflowEdge[];
  onSelect?: (step: WorkflowStep) => void;
}) {
  const { t } = useTranslation();
  const { placed, width, height } = useMemo(() => layout(steps, edges), [steps, edges]);
  return (
    <div style={{ overflow: 'auto', border: '1px solid #f0f0f0', borderRadius: 8, background: '#fff' }}>
      <svg width={width} height={height} data-testid="dag" role="img" aria-label={t('wf.graph')}>
        <defs>
          <marker id="dag-arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse">
            <path d="M 0 0 L 10 5 L 0 10 z" fill="#8c8c8c" />
          </marker>
        </defs>
        {edges.map((e) => {
          const a = placed.get(e.from);
          const b = placed.get(e.to);
          if (!a || !b) return null;
          const x1 = a.x + W;
          const y1 = a.y + H / 2;
          const x2 = b.x;
          const y2 = b.y + H / 2;
          const mid = (x1 + x2) / 2;
          const st = EDGE_STYLE[e.on];
          return (
            <path
              key={`${e.from}->${e.to}`}
              data-testid="dag-edge"
              data-on={e.on}
              d={`M ${x1} ${y1} C ${mid} ${y1}, ${mid} ${y2}, ${x2 - 2} ${y2}`}
              fill="none"
              stroke={st.stroke}
              strokeWidth={1.5}
              strokeDasharray={st.dash}
              markerEnd="url(#dag-arrow)"
            />
          );
        })}
        {[...placed.values()].map(({ step, x, y }) => {
          const c = STEP_COLORS[step.state] ?? STEP_COLORS.pending;
          const clickable = !!step.task_id && !!onSelect;
          return (
            <g
              key={step.name}
              data-testid="dag-node"
              data-step={step.name}
              data-state={step.state}
              transform={`translate(${x},${y})`}
              style={{ cursor: clickable ? 'pointer' : 'default' }}
              onClick={() => clickable && onSelect?.(step)}
            >
              <title>{[step.name, t(`wfState.${step.state}`), step.reason].filter(Boolean).join(' · ')}</title>
              <rect
                width={W}
                height={H}
                rx={8}
                fill={c.fill}
                stroke={c.stroke}
                strokeWidth={step.state === 'running' ? 2.5 : 1.5}
                strokeDasharray={step.state === 'skipped' ? '4 3' : undefined}
              />
              <text x={10} y={18} fontSize={13} fontWeight={600} fill="#262626">
                {short(step.name)}
              </text>
              <text x={10} y={35} fontSize={11} fill={c.stroke}>
                {t(`wfState.${step.state}`)}
                {step.task_id ? ` · #${step.task_id}` : ''}
                {step.exit_code != null ? ` · exit ${step.exit_code}` : ''}
              </text>
            </g>
          );
        })}
      </svg>
    </div>
  );
}
