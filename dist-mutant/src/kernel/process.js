/** Whether a process runs, as signal 0 tells: EPERM is a process of another user, still running. */
export function processRunning(pid) {
    try {
        process.kill(pid, 0);
        return true;
    }
    catch (err) {
        return err.code === 'EPERM';
    }
}
