// API 密钥页面文案（简体中文）。键与 apikeys.en.ts 一致。
import type apikeysEn from './apikeys.en';

const apikeysZh: typeof apikeysEn = {
  keys: {
    title: 'API 密钥',
    intro: '供脚本、Grafana、中枢集群与命令行（--api-key）使用的密钥。密钥按其角色行事，角色不高于你自己的。',
    new: '新建 API 密钥',
    name: '名称',
    namePlaceholder: '用途，例如 grafana',
    prefix: '前缀',
    role: '角色',
    owner: '所有者',
    node: '节点',
    createdAt: '创建时间',
    lastUsed: '最近使用',
    expiresAt: '过期时间',
    never: '永不过期',
    expiresIn: '有效期（天）',
    expiresHelp: '留空：密钥不过期',
    state: '状态',
    states: { active: '有效', revoked: '已吊销', expired: '已过期' },
    revoke: '吊销',
    confirmRevoke: '吊销密钥 {{name}}？使用它的程序会立即失效。',
    revoked: '已吊销密钥 {{name}}',
    created: '已创建密钥 {{name}}',
    shownOnce: '请立即复制密钥：它只显示这一次。',
    done: '完成',
    required: '必填',
  },
};

export default apikeysZh;
