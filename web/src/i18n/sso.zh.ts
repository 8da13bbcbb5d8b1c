// 通过目录 (LDAP) 或 OpenID 身份提供方登录（简体中文）。键与 sso.en.ts 一一对应；
// sso.errors 为服务器的稳定错误码。
const ssoZh = {
  sso: {
    or: '或',
    signInWith: '使用 {{name}} 登录',
    finishing: '正在完成登录…',
    backToLogin: '返回登录',
    sourceLdap: 'LDAP 目录',
    sourceOidc: '单点登录 · {{provider}}',
    errors: {
      ldap_unavailable: '无法连接目录服务器 (LDAP)，已拒绝登录。请稍后重试或联系管理员。',
      ldap_service_bind_failed: '目录服务器拒绝了 HeteroFlow 的服务账号，已拒绝登录。请管理员检查 auth.ldap 配置。',
      ldap_directory_error: '目录服务器返回错误，已拒绝登录。请管理员检查 auth.ldap 配置。',
      sso_no_role: '您所在的组均未被授予 HeteroFlow 访问权限，请联系管理员。',
      sso_account_conflict: '用户名 {{username}} 已属于本系统中的另一个账户，请联系管理员。',
      sso_account_disabled: '您的账户已在目录或身份提供方处被停用。',
      sso_tenant_not_found: '您所在组映射到的租户 {{tenant}} 不存在，请联系管理员。',
      sso_bad_username: '身份源提供的名称 {{username}} 不能用作用户名，请联系管理员。',
      oidc_unknown_provider: '未配置该登录方式。',
      oidc_provider_unavailable: '无法连接身份提供方，已拒绝登录。请稍后重试。',
      oidc_bad_state: '无法将此次登录与当前浏览器对应（已过期或被篡改），请重新开始。',
      oidc_bad_token: '身份提供方返回的令牌校验失败，已拒绝登录。',
      oidc_exchange_failed: '身份提供方拒绝了登录授权码（已过期或已使用），请重新开始。',
      oidc_denied: '身份提供方未完成登录（{{reason}}）。',
      oidc_no_session: '当前浏览器没有待完成的登录，请重新开始。',
      external_account_password: '该账户通过 {{source}} 登录，没有本地密码。',
    },
  },
};

export default ssoZh;
