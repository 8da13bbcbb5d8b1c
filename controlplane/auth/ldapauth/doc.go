// Package ldapauth signs users in against an LDAP directory (OpenLDAP,
// Active Directory, 389-ds) by bind-search-bind:
//
//	service bind (bind_dn) → search user_base for user_filter with the
//	escaped username → read groups (member_of_attribute, or a search of
//	group_base with group_filter) and the disabled_filter → bind as the
//	user's DN with the password typed → auth.ExternalIdentity
//
// The connection is ldaps://, or ldap:// upgraded with StartTLS, verified
// against ca_file (or the system roots). Every failure fails closed: an
// unreachable directory or a refused service bind is an error with a
// stable code, never a reason to try a local password.
package ldapauth
