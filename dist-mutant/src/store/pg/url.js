/** A PostgreSQL store's URL: which it is, and how it is shown (never its password). */
/**
 * The user-and-password part of a postgresql:// URL, read by hand: WHATWG
 * URL refuses libpq's forms with no host (`postgresql://user@/db?host=/run`).
 */
const USERINFO = /^(postgres(?:ql)?:\/\/)([^@/?#]*)@/i;
/** Whether `url` carries a password (`user:password@`). */
export function hasPassword(url) {
    return USERINFO.exec(url)?.[2]?.includes(':') === true;
}
/** A store URL with any password cut out, for messages and `vault migrate`'s report. */
export function displayUrl(url) {
    return url.replace(USERINFO, (_all, scheme, info) => {
        const user = info.split(':')[0] ?? '';
        return `${scheme}${user}${info.includes(':') ? ':***' : ''}@`;
    });
}
/** Whether `url` names a PostgreSQL store. */
export function isPgUrl(url) {
    return /^postgres(ql)?:\/\//i.test(url);
}
