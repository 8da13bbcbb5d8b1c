// Sign-in through a directory (LDAP) or an OpenID provider (English). Keys
// mirror sso.zh.ts; sso.errors holds the server's stable error codes.
const ssoEn = {
  sso: {
    or: 'or',
    signInWith: 'Sign in with {{name}}',
    finishing: 'Finishing sign-in…',
    backToLogin: 'Back to sign-in',
    sourceLdap: 'LDAP',
    sourceOidc: 'SSO · {{provider}}',
    errors: {
      ldap_unavailable: 'The directory server (LDAP) cannot be reached, so sign-in is refused. Try again shortly or tell an administrator.',
      ldap_service_bind_failed: "The directory refused HeteroFlow's service account, so sign-in is refused. An administrator must fix auth.ldap.",
      ldap_directory_error: 'The directory answered with an error, so sign-in is refused. An administrator must check auth.ldap.',
      sso_no_role: 'None of your groups is granted access to HeteroFlow. Ask an administrator.',
      sso_account_conflict: 'The username {{username}} belongs to another account here. Ask an administrator.',
      sso_account_disabled: 'Your account is disabled in the directory or at the identity provider.',
      sso_tenant_not_found: 'The tenant {{tenant}} your groups map to does not exist. Ask an administrator.',
      sso_bad_username: 'The name {{username}} from the identity source cannot be used as a username. Ask an administrator.',
      oidc_unknown_provider: 'This sign-in provider is not configured.',
      oidc_provider_unavailable: 'The identity provider cannot be reached, so sign-in is refused. Try again shortly.',
      oidc_bad_state: 'The sign-in could not be matched to this browser (expired or altered). Start again.',
      oidc_bad_token: 'The identity provider returned a token that does not verify. Sign-in refused.',
      oidc_exchange_failed: 'The identity provider refused the sign-in code (expired or already used). Start again.',
      oidc_denied: 'The identity provider did not sign you in ({{reason}}).',
      oidc_no_session: 'No finished sign-in is waiting for this browser. Start again.',
      external_account_password: 'This account signs in through {{source}} and has no local password.',
    },
  },
};

export default ssoEn;
