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
  [/^allow_best_effort applies to qos silver tasks with devices only$/, () => 'allow_best_effort 仅适用于申请设备的 Silver 任务'],
  [/^label "(.*)": the heteroflow\. prefix is reserved for labels HeteroFlow sets itself$/, (m) => `标签“${m[1]}”：heteroflow. 前缀保留给 HeteroFlow 自身设置的标签`],
  [
    /^(placed on .*); best-effort: no device that enforces Silver \(CUDA MPS, HAMi-core, vendor limits\) could take it, so it shares the device without enforced limits, as the task allows$/s,
    (m) => `${m[1]}；尽力而为：没有能强制 Silver 限制的设备（CUDA MPS、HAMi-core、厂商限制）可容纳，按任务的允许，在不强制限制的情况下共享该设备`,
  ],
  [
    /^no node in the cluster can ever hold this task: (.*); change the request, or set wait_for_nodes to queue it until such a node joins$/,
    (m) => `集群中没有任何节点能容纳此任务：${neverDetail(m[1])}。请修改需求，或选择“排队等待新节点”。`,
  ],
  [/^it asks for (\d+) (.*) on one node, the largest node has (\d+)$/, (m) => `单个节点需要 ${m[1]} 个${dev(m[2])}，最大的节点只有 ${m[3]} 个`],
  [/^it asks for (\d+) MiB per device, the largest of the cluster's (.*) has (\d+) MiB$/, (m) => `每个设备需要 ${m[1]} MiB 显存，集群中最大的${dev(m[2])}只有 ${m[3]} MiB`],
  [/^it asks for (\d+) (.*) with (\d+) MiB each on one node, the most any node has is (\d+)$/, (m) => `单个节点需要 ${m[1]} 个各有 ${m[3]} MiB 的${dev(m[2])}，任何节点最多只有 ${m[4]} 个`],
  [/^no node in the cluster has (.*)$/, (m) => `集群中没有任何节点有${dev(m[1])}`],
  // Tenancy (codes tenant_forbidden, tenant_not_found, tenant_disabled,
  // tenant_read_only, project_not_found, project_disabled).
  [/^you are not allowed to act in tenant "(.*)": ask one of its tenant admins to add you$/, (m) => `你无权在租户“${m[1]}”中操作：请联系该租户的管理员将你加入`],
  [/^tenant "(.*)" does not exist$/, (m) => `租户“${m[1]}”不存在`],
  [/^tenant "(.*)" is disabled and accepts no new tasks$/, (m) => `租户“${m[1]}”已停用，不再接受新任务`],
  [/^tenant (.*) is disabled$/, (m) => `租户“${m[1]}”已停用`],
  [/^you are a viewer of tenant "(.*)" and cannot submit tasks into it$/, (m) => `你是租户“${m[1]}”的只读成员，不能向其提交任务`],
  [/^you are a viewer of tenant "(.*)": only the owner and the tenant's admins can act on (task|workflow) (\d+)$/, (m) =>
    `你是租户“${m[1]}”的只读成员：只有所有者和该租户的管理员可以操作${m[2] === 'task' ? '任务' : '工作流'} ${m[3]}`],
  [/^tenant "(.*)" has no project "(.*)"$/, (m) => `租户“${m[1]}”没有项目“${m[2]}”`],
  [/^project "(.*)" of tenant "(.*)" is disabled$/, (m) => `租户“${m[2]}”的项目“${m[1]}”已停用`],
  [/^conflict: you cannot give up your own tenant-admin role in "(.*)"; another tenant admin or a cluster admin can$/, (m) => `冲突：你不能放弃自己在“${m[1]}”的租户管理员角色；可由其他租户管理员或集群管理员操作`],
  [/^(tenant|project) name must be 1–64 letters, digits, '\.', '_' or '-', starting with a letter or digit, not "(.*)"$/, (m) =>
    `${m[1] === 'tenant' ? '租户' : '项目'}名称须为 1–64 个字母、数字、“.”、“_”或“-”，并以字母或数字开头，而不是“${m[2]}”`],
  // A lookup of something that does not exist (code not_found), e.g. a
  // stale /tasks/:id link: "task 42: not found", `tenant "acme": not found`.
  [/^([a-z][a-z ]*?) "?([^"]*)"?: not found$/, (m) => (NOUNS[m[1]] ? `${NOUNS[m[1]]} ${m[2]} 不存在` : `未找到：${m[0]}`)],
  // Acting on a task or workflow in the wrong state (code conflict).
  [/^conflict: (task|workflow) (\d+) is (\w+) and cannot be cancelled$/, (m) =>
    `冲突：${NOUNS[m[1]]} ${m[2]} 已是“${stateZh(m[1], m[3])}”状态，无法取消`],
  [/^conflict: workflow (\d+) is (\w+); only a failed or cancelled workflow can be retried$/, (m) =>
    `冲突：工作流 ${m[1]} 为“${stateZh('workflow', m[2])}”状态，只有失败或已取消的工作流可以重试`],
  [/^conflict: (.*)$/s, (m) => `冲突：${zh(m[1])}`],
  // Authentication answers (code unauthenticated), also recorded in the
  // audit log as "denied: …".
  [/^unauthenticated: (.*)$/s, (m) => `未认证：${zh(m[1])}`],
  [/^invalid username or password, or the account is temporarily locked$/, () => '用户名或密码错误，或账户已被临时锁定'],
  [/^authentication required$/, () => '需要登录'],
  [/^invalid access token$/, () => '访问令牌无效或已过期'],
  [/^invalid API key$/, () => 'API 密钥无效'],
];

// NOUNS are the objects the API names in its not-found and conflict texts.
const NOUNS: Record<string, string> = {
  task: '任务',
  workflow: '工作流',
  user: '用户',
  tenant: '租户',
  project: '项目',
  node: '节点',
  plugin: '插件',
  'hub task': '中枢任务',
  'api key': 'API 密钥',
  quota: '配额',
  cluster: '集群',
  alert: '告警',
  'alert rule': '告警规则',
  silence: '静默',
  channel: '通知渠道',
  'task owner': '任务所有者',
  'workflow owner': '工作流所有者',
};

function stateZh(kind: string, state: string): string {
  const key = kind === 'workflow' ? `wfState.${state}` : `taskState.${state}`;
  return i18n.exists(key) ? i18n.t(key, { lng: 'zh' }) : state;
}

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

// The Chinese of the API's generic error codes (docs/api-contract.md), for
// a message no rule above knows: it is shown before the server's English,
// so an error is never in English only.
const CODE_ZH: Record<string, string> = {
  invalid_argument: '输入无效',
  unauthenticated: '未登录或会话已过期',
  forbidden: '无权执行此操作',
  not_found: '未找到',
  method_not_allowed: '不支持此方法',
  conflict: '与当前状态冲突',
  payload_too_large: '请求过大',
  unsupported_media_type: '不支持的内容类型',
  locked: '账户已锁定',
  too_many_requests: '请求过于频繁，请稍后重试',
  unavailable: '服务暂不可用，请稍后重试',
  internal: '服务器内部错误',
};

/**
 * serverErrorText is an API error's message in the console's language:
 * translated where a rule knows it, else in Chinese led by its code's gist.
 */
export function serverErrorText(code: string, text: string | undefined | null): string {
  const out = serverText(text);
  if (i18n.language === 'en' || /\p{Script=Han}/u.test(out)) return out;
  const gist = CODE_ZH[code];
  return gist ? `${gist}：${out}` : out;
}
