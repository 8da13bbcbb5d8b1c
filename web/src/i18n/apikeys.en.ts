// API keys page strings (English). Keys mirror apikeys.zh.ts.
const apikeysEn = {
  keys: {
    title: 'API keys',
    intro: 'Keys for scripts, Grafana, hub clusters and the CLI (--api-key). A key acts with its role, never above yours.',
    new: 'New API key',
    name: 'Name',
    namePlaceholder: 'what it is for, e.g. grafana',
    prefix: 'Prefix',
    role: 'Role',
    owner: 'Owner',
    node: 'Node',
    createdAt: 'Created',
    lastUsed: 'Last used',
    expiresAt: 'Expires',
    never: 'Never',
    expiresIn: 'Expires in (days)',
    expiresHelp: 'Empty: the key does not expire',
    state: 'State',
    states: { active: 'Active', revoked: 'Revoked', expired: 'Expired' },
    revoke: 'Revoke',
    confirmRevoke: 'Revoke key {{name}}? Whatever uses it stops working at once.',
    revoked: 'Key {{name}} revoked',
    created: 'Key {{name}} created',
    shownOnce: 'Copy the key now: it is shown only this once.',
    done: 'Done',
    required: 'Required',
  },
};

export default apikeysEn;
