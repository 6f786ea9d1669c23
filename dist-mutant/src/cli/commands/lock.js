export const run = async (ctx) => {
    const { ended } = await ctx.call('owner.lock', {}, { autoStart: false }).catch((err) => {
        // No host running: no session either.
        if (err instanceof Error && 'code' in err && err.code === 'VLT-3005')
            return { ended: false };
        throw err;
    });
    ctx.stderr.write(ended ? 'vault-cli: locked\n' : 'vault-cli: this terminal had no owner session\n');
    return 0;
};
