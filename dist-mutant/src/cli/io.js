/**
 * Terminal and pipe input: values and tokens come from stdin or a prompt
 * without echo, passphrases from a prompt or VAULT_PASSPHRASE_FILE; never from
 * the argument list.
 */
import { VaultError } from '../core/errors.js';
import { Secret } from '../crypto/secret.js';
// On get's path: built-ins by getBuiltinModule, not import (docs/development.md, "Start-up").
const { closeSync, openSync, readFileSync } = process.getBuiltinModule('node:fs');
const { ReadStream, WriteStream } = process.getBuiltinModule('node:tty');
/** All of stdin as bytes. */
export async function readAll(stdin) {
    const chunks = [];
    for await (const c of stdin)
        chunks.push(typeof c === 'string' ? Buffer.from(c) : c);
    const all = Buffer.concat(chunks);
    for (const c of chunks)
        c.fill(0);
    return all;
}
/** Drops one trailing newline (LF or CRLF): `echo value |` should store `value`. */
export function chompOne(b) {
    if (b.length > 0 && b[b.length - 1] === 0x0a) {
        const cut = b.length > 1 && b[b.length - 2] === 0x0d ? 2 : 1;
        return b.subarray(0, b.length - cut);
    }
    return b;
}
/**
 * Asks each of `questions` in turn on the controlling terminal, with echo off
 * from the first question to the last answer. Keys typed ahead or pasted in
 * one go ("secret<Enter>secret<Enter>") answer the next question: the terminal
 * stays raw between questions, so nothing typed early is echoed or dropped.
 * `check` sees each answer as it is given and may refuse it by throwing, so a
 * bad first answer is refused before the next question is asked.
 * @throws VaultError VLT-1003 when there is no terminal, VLT-1002 when cancelled,
 * or what `check` throws.
 */
export async function promptHidden(questions, check) {
    let fd;
    try {
        fd = openSync('/dev/tty', 'r+');
    }
    catch {
        throw new VaultError('VLT-1003', 'No terminal to prompt on; pipe the value on stdin or set VAULT_PASSPHRASE_FILE.');
    }
    const input = new ReadStream(fd);
    const output = new WriteStream(fd);
    input.setRawMode(true);
    const answers = [];
    let bytes = [];
    try {
        output.write(questions[0] ?? '');
        await new Promise((resolve, reject) => {
            // A terminal that sends CR LF for Enter gives one answer, not an empty second one.
            let afterCr = false;
            const onData = (chunk) => {
                try {
                    for (const b of chunk) {
                        if (afterCr && b === 0x0a) {
                            afterCr = false;
                            continue;
                        }
                        afterCr = b === 0x0d;
                        if (b === 0x0d || b === 0x0a) {
                            answers.push(new Secret(Buffer.from(bytes)));
                            bytes.fill(0);
                            bytes = [];
                            output.write('\n');
                            const answer = answers[answers.length - 1];
                            try {
                                check?.(answer, answers.length - 1);
                            }
                            catch (err) {
                                return finish(() => reject(err));
                            }
                            const next = questions[answers.length];
                            if (next === undefined)
                                return finish(resolve);
                            output.write(next);
                        }
                        else if (b === 0x03 || b === 0x04) {
                            output.write('\n');
                            return finish(() => reject(new VaultError('VLT-1002', 'Cancelled.')));
                        }
                        else if (b === 0x7f || b === 0x08) {
                            bytes.pop();
                        }
                        else {
                            bytes.push(b);
                        }
                    }
                }
                finally {
                    // Best effort: JavaScript gives no guarantee that no other copy exists.
                    chunk.fill(0);
                }
            };
            const finish = (done) => {
                input.off('data', onData);
                done();
            };
            input.on('data', onData);
        });
    }
    catch (err) {
        for (const a of answers)
            a.wipe();
        throw err;
    }
    finally {
        bytes.fill(0);
        input.setRawMode(false);
        input.destroy();
        try {
            closeSync(fd);
        }
        catch {
            // already closed by the stream
        }
    }
    return answers;
}
/**
 * A passphrase from `file` (one trailing newline dropped), else a prompt (twice
 * when `confirm`); `check` refuses a bad one before it is asked again.
 */
export async function passphrase(file, what, confirm = false, check) {
    if (file !== null) {
        let raw;
        try {
            raw = readFileSync(file);
        }
        catch {
            throw new VaultError('VLT-1002', 'Cannot read the passphrase file.');
        }
        const s = new Secret(Buffer.from(chompOne(raw)));
        try {
            check?.(s);
        }
        catch (err) {
            s.wipe();
            throw err;
        }
        return s;
    }
    const [first, again] = await promptHidden(confirm ? [`${what}: `, `${what} (again): `] : [`${what}: `], (answer, i) => {
        if (i === 0)
            check?.(answer);
    });
    if (first === undefined)
        throw new VaultError('VLT-1002', 'Cancelled.');
    if (again === undefined)
        return first;
    if (!first.expose().equals(again.expose())) {
        first.wipe();
        again.wipe();
        throw new VaultError('VLT-1002', 'The two entries differ.');
    }
    again.wipe();
    return first;
}
/** A value or token: stdin when it is not a terminal, else a hidden prompt. */
export async function secretInput(stdin, what, confirm = false) {
    if (!stdin.isTTY)
        return new Secret(Buffer.from(chompOne(await readAll(stdin))));
    return passphrase(null, what, confirm);
}
