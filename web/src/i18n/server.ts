// Messages the server sends in English (task reasons, why-pending
// summaries and node reasons, validation errors) shown in the console's
// language. The server's texts are stable: each known phrase has a
// translation here; anything unknown is shown as sent.
import i18n from './index';

type Rule = [RegExp, (m: RegExpMatchArray) => string];

// Phrases, most specific first. Captured parts are translated again.
const ZH: Rule[] = [
  [/^invalid input: (.*)$/s, (m) => `输入无效：${zh(m[1])}`],
  [/^0\/(\d+) nodes are available: (.*)$/, (m) => `0/${m[1]} 个节点可用：${m[2].split(', ').map(countPart).join('，')}`],
  [/^admitted, waiting for quota: (.*)$/, (m) => `已接纳，等待配额：${zh(m[1])}`],
  [/^admitted$/, () => '已接纳，排队等待调度'],
  [/^no node fits$/, () => '没有节点满足要求'],
  [/^insufficient cpu$/, () => 'CPU 不足'],
  [/^insufficient host memory$/, () => '主机内存不足'],
  [/^too few devices$/, () => '设备数量不足'],
  [/^no device has enough free memory\/compute for the QoS tier$/, () => '没有设备有足够的空闲显存/算力（按 QoS 等级）'],
  [/^no device of the requested vendor\/model in the cluster$/, () => '集群中没有所需厂商/型号的设备'],
  [/^no device of the requested vendor\/model on the node$/, () => '该节点上没有所需厂商/型号的设备'],
  [/^no device slice fits$/, () => '没有合适的设备切片'],
  [/^no lower-priority placements whose removal makes room$/, () => '没有可抢占以腾出空间的低优先级任务'],
  [/^node has no InfiniBand\/RoCE$/, () => '节点没有 InfiniBand/RoCE'],
  [/^node is in a maintenance window$/, () => '节点处于维护窗口'],
  [/^over the tenant\/project quota for every admitted vendor$/, () => '所有允许的厂商均超出租户/项目配额'],
  [/^over the tenant\/project quota$/, () => '超出租户/项目配额'],
  [/^devices saturated in reality \(live utilisation\)$/, () => '设备实际已满载（实时利用率）'],
  [/^password must be at least (\d+) characters$/, (m) => `密码至少 ${m[1]} 个字符`],
  [/^password must be at most (\d+) characters$/, (m) => `密码最多 ${m[1]} 个字符`],
  [/^password must mix at least (\d+) of: lower case, upper case, digits, symbols$/, (m) => `密码须至少包含小写字母、大写字母、数字、符号中的 ${m[1]} 类`],
  [/^password must not contain the username$/, () => '密码不能包含用户名'],
  [
    /^no node in the cluster can ever hold this task: (.*); change the request, or set wait_for_nodes to queue it until such a node joins$/,
    (m) => `集群中没有任何节点能容纳此任务：${neverDetail(m[1])}。请修改需求，或选择“排队等待新节点”。`,
  ],
  [/^it asks for (\d+) (.*) on one node, the largest node has (\d+)$/, (m) => `单个节点需要 ${m[1]} 个${dev(m[2])}，最大的节点只有 ${m[3]} 个`],
  [/^it asks for (\d+) MiB per device, the largest of the cluster's (.*) has (\d+) MiB$/, (m) => `每个设备需要 ${m[1]} MiB 显存，集群中最大的${dev(m[2])}只有 ${m[3]} MiB`],
  [/^it asks for (\d+) (.*) with (\d+) MiB each on one node, the most any node has is (\d+)$/, (m) => `单个节点需要 ${m[1]} 个各有 ${m[3]} MiB 的${dev(m[2])}，任何节点最多只有 ${m[4]} 个`],
  [/^no node in the cluster has (.*)$/, (m) => `集群中没有任何节点有${dev(m[1])}`],
];

function dev(s: string): string {
  return s === 'devices' ? '设备' : `${s.replace(/ devices$/, '')} 设备`;
}

function neverDetail(s: string): string {
  return zh(s);
}

function countPart(p: string): string {
  const m = p.match(/^(\d+) (.*)$/);
  return m ? `${m[1]} 个节点${zh(m[2])}` : zh(p);
}

function zh(text: string): string {
  for (const [re, f] of ZH) {
    const m = text.match(re);
    if (m) return f(m);
  }
  // Several rules at once ("…; …"): each part on its own.
  if (text.includes('; ')) {
    const parts = text.split('; ');
    const out = parts.map(zh);
    if (out.some((o, i) => o !== parts[i])) return out.join('；');
  }
  return text;
}

/** serverText shows a server message in the console's language. */
export function serverText(text: string | undefined | null): string {
  if (!text) return '';
  return i18n.language === 'en' ? text : zh(text);
}
