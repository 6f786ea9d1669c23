import { jsx as _jsx, jsxs as _jsxs } from "react/jsx-runtime";
/**
 * The dashboard: state from the reducer, data from the DashboardApi. It loads
 * a snapshot on mount, then is pushed changes: the audit feed (each record
 * refreshes the agents, and an owner's record about an entry the entries).
 * Between records it asks again only while a usage window can roll (an agent
 * read something this minute: every second; this hour or a recent violation:
 * every ROLL_TICKS seconds), so an idle vault costs its host nothing. Every
 * api failure ends in the notice line as `vault-cli: VLT-XXXX: message`;
 * none ends the app.
 */
import { Box, useInput, useWindowSize } from 'ink';
import { useEffect, useReducer, useRef } from 'react';
import { keyPresses, rawKeyName } from './keys.js';
import { errorLine, initialState, modeOf, reduce, } from './state.js';
import { AgentsTable } from './components/AgentsTable.js';
import { AuditFeed } from './components/AuditFeed.js';
import { EntriesView } from './components/EntriesView.js';
import { Footer, NoticeLine } from './components/Footer.js';
import { Header } from './components/Header.js';
import { ConfirmPanel, FormPanel, HelpPanel, TokenPanel, UnlockPanel, } from './components/Panels.js';
/** Ticks between refreshes while only the hour window (or a violation's two hours) can roll. */
const ROLL_TICKS = 30;
/** How soon the agents' summaries can change with no record: each tick, every ROLL_TICKS, or never. */
function rollingOf(agents) {
    if (agents.some((a) => a.usage.minute > 0))
        return 1;
    if (agents.some((a) => a.usage.hour > 0 || a.violations.length > 0))
        return ROLL_TICKS;
    return 0;
}
/** Carries out one owner call; its result as the reducer wants it. */
async function perform(api, call) {
    switch (call.op) {
        case 'setField':
            return { version: (await api.setField(call.entry, call.field, call.value)).version };
        case 'removeEntry':
            await api.removeEntry(call.entry);
            return {};
        case 'addAgent':
            return {
                token: (await api.addAgent(call.name, call.kind, [...call.scope], call.limits)).token,
            };
        case 'revokeAgent':
            await api.revokeAgent(call.name);
            return {};
        case 'changeScope':
            await api.changeScope(call.name, [...call.add], [...call.rm]);
            return {};
        case 'changeLimits':
            await api.changeLimits(call.name, call.perMinute, call.perHour);
            return {};
    }
}
export function Dashboard({ api, now, onLeave, vault = 'vault', leaveKeys = [], recent = 50, refreshMs = 1000, }) {
    const [state, dispatch] = useReducer((s, a) => reduce(s, a, now()), null, () => initialState(now()));
    const { rows, columns } = useWindowSize();
    const live = useRef(true);
    const refresh = useFeed(api, dispatch, live, recent, refreshMs);
    useOwnerCall(api, state.request, dispatch, live, refresh);
    useKeyCeremony(api, state.unlock, dispatch, live, refresh);
    useLeave(state.leaving, onLeave);
    useKeys(leaveKeys, dispatch);
    return _jsx(Screen, { state: state, rows: rows, columns: columns, vault: vault });
}
/**
 * The agents asked for again, one request at a time: a request during one
 * asks for one more after it. `rolling` is every how many ticks they are asked
 * with no record (0: not).
 */
function agentsRefresher(api, dispatch, live, fail) {
    const r = {
        busy: false,
        again: false,
        rolling: 0,
        refresh: () => {
            if (r.busy) {
                r.again = true;
                return;
            }
            r.busy = true;
            api
                .agents()
                .then((list) => {
                if (!live.current)
                    return;
                r.rolling = rollingOf(list);
                dispatch({ type: 'snapshot', agents: list });
            }, fail)
                .finally(() => {
                r.busy = false;
                if (r.again && live.current) {
                    r.again = false;
                    r.refresh();
                }
            });
        },
    };
    return r;
}
/** The first snapshot: agents, entries and the last `recent` records, each as it came. */
async function loadSnapshot(api, recent, dispatch, live, fail, agents) {
    agents.busy = true;
    const [a, e, r] = await Promise.allSettled([
        api.agents(),
        api.entries(),
        api.recentAudit(recent),
    ]);
    agents.busy = false;
    if (!live.current)
        return;
    if (a.status === 'fulfilled')
        agents.rolling = rollingOf(a.value);
    dispatch({
        type: 'snapshot',
        ...(a.status === 'fulfilled' ? { agents: a.value } : {}),
        ...(e.status === 'fulfilled' ? { entries: e.value } : {}),
        ...(r.status === 'fulfilled' ? { audit: r.value } : {}),
    });
    for (const x of [a, e, r])
        if (x.status === 'rejected')
            fail(x.reason);
}
/** Mount: snapshot, then the audit feed, and the refresh while windows roll. */
function useFeed(api, dispatch, live, recent, refreshMs) {
    const refreshAgents = useRef(() => { });
    const refreshEntries = useRef(() => { });
    useEffect(() => {
        live.current = true;
        const fail = (err) => {
            if (live.current)
                dispatch({ type: 'failed', id: null, line: errorLine(err) });
        };
        const agents = agentsRefresher(api, dispatch, live, fail);
        refreshAgents.current = agents.refresh;
        refreshEntries.current = () => {
            api
                .entries()
                .then((list) => live.current && dispatch({ type: 'snapshot', entries: list }), fail);
        };
        let stop = null;
        void (async () => {
            await loadSnapshot(api, recent, dispatch, live, fail, agents);
            if (!live.current)
                return;
            stop = api.followAudit((record) => {
                if (!live.current)
                    return;
                dispatch({ type: 'audit', record });
                agents.refresh();
                // Owner actions change entries too (add, rotate, remove).
                if (record.actor === 'owner' && record.entry !== null)
                    refreshEntries.current();
            }, fail);
        })();
        let ticks = 0;
        const timer = setInterval(() => {
            dispatch({ type: 'tick' });
            ticks++;
            if (agents.rolling > 0 && ticks % agents.rolling === 0)
                agents.refresh();
        }, refreshMs);
        return () => {
            live.current = false;
            clearInterval(timer);
            stop?.();
        };
    }, [api, recent, refreshMs]);
    return { agents: refreshAgents, entries: refreshEntries };
}
/** An owner call asked for by the reducer, carried out once per request. */
function useOwnerCall(api, request, dispatch, live, refresh) {
    useEffect(() => {
        if (request === null)
            return;
        perform(api, request.call).then((r) => {
            if (!live.current)
                return;
            dispatch({ type: 'result', id: request.id, ...r });
            refresh.agents.current();
            refresh.entries.current();
        }, (err) => live.current && dispatch({ type: 'failed', id: request.id, line: errorLine(err) }));
        // Only a new request id starts a call.
    }, [request?.id]);
}
/** The hardware-key ceremony the reducer started: a locked agent's unlock, or a key's enrolment. */
function useKeyCeremony(api, unlock, dispatch, live, refresh) {
    const unlockId = unlock?.status === 'starting' ? unlock.id : null;
    useEffect(() => {
        if (unlock === null || unlockId === null)
            return;
        const { id, agent } = unlock;
        const onUrl = (url) => live.current && dispatch({ type: 'unlockUrl', id, url });
        const failed = (err) => live.current && dispatch({ type: 'unlockFailed', id, agent, line: errorLine(err) });
        if (unlock.kind === 'enrol') {
            api
                .enrolKey(onUrl)
                .then(({ name }) => live.current && dispatch({ type: 'enrolDone', id, name }), failed);
            return;
        }
        api.unlock(agent, onUrl).then((outcome) => {
            if (!live.current)
                return;
            dispatch({ type: 'unlockDone', id, agent, outcome });
            refresh.agents.current();
        }, failed);
    }, [unlockId]);
}
/** Calls `onLeave` once, when the reducer says the user leaves. */
function useLeave(leaving, onLeave) {
    const left = useRef(false);
    useEffect(() => {
        if (!leaving || left.current)
            return;
        left.current = true;
        onLeave();
    }, [leaving, onLeave]);
}
/** Key presses to the reducer; a leave key leaves from anywhere. */
function useKeys(leaveKeys, dispatch) {
    const leaveNames = leaveKeys.map(rawKeyName);
    useInput((input, key) => {
        for (const press of keyPresses(input, key)) {
            if (leaveNames.includes(press.name))
                return dispatch({ type: 'leave' });
            dispatch({ type: 'key', key: press });
        }
    });
}
/** The whole screen for a state: what the dashboard shows, with no behaviour of its own. */
export function Screen({ state, rows, columns = 80, vault, }) {
    // Header, tabs, notice and a two-line footer; one row spare so a frame never fills the screen.
    const body = Math.max(6, rows - 6);
    return (_jsxs(Box, { flexDirection: "column", height: rows - 1, children: [_jsx(Header, { vault: vault, now: state.now, view: state.view, agents: state.agents, entries: state.entries, loaded: state.loaded }), _jsx(Box, { flexDirection: "column", flexGrow: 1, overflow: "hidden", children: panelOf(state) ?? _jsx(View, { state: state, body: body, columns: columns }) }), _jsx(Box, { flexShrink: 0, children: _jsx(NoticeLine, { notice: state.notice }) }), _jsx(Footer, { mode: modeOf(state), tokenShown: state.token !== null || state.help })] }));
}
/** The panel over the view, if one is open: the token, help, an unlock, a confirmation or a form. */
function panelOf(state) {
    if (state.token !== null)
        return _jsx(TokenPanel, { agent: state.token.agent, token: state.token.token });
    if (state.help)
        return _jsx(HelpPanel, {});
    if (state.unlock !== null)
        return _jsx(UnlockPanel, { unlock: state.unlock });
    if (state.confirm !== null)
        return _jsx(ConfirmPanel, { confirm: state.confirm });
    if (state.form !== null)
        return _jsx(FormPanel, { form: state.form });
    return null;
}
/** The view chosen: agents over the audit, the entries, or the audit alone; `body` rows high. */
function View({ state, body, columns, }) {
    if (state.view === 'entries') {
        return (_jsx(EntriesView, { entries: state.entries, selected: state.selected.entries, rows: body - 1, width: columns }));
    }
    if (state.view !== 'agents') {
        return (_jsx(AuditFeed, { records: state.audit, rows: body - 1, scroll: state.selected.audit, loaded: state.loaded }));
    }
    const agentRows = Math.min(state.agents.length || 1, Math.max(2, Math.floor(body / 2) - 1));
    return (_jsxs(Box, { flexDirection: "column", children: [_jsx(AgentsTable, { agents: state.agents, selected: state.selected.agents, rows: agentRows, active: true, loaded: state.loaded }), _jsx(Box, { marginTop: 1, flexShrink: 0, children: _jsx(AuditFeed, { records: state.audit, rows: body - agentRows - 3, loaded: state.loaded }) })] }));
}
