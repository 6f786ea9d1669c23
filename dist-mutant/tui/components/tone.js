export const COLOR = {
    ok: 'green',
    warn: 'yellow',
    alarm: 'red',
    muted: 'gray',
};
