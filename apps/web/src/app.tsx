import { newThreadId, type SearchHit } from '@promethea/cpp-protocol';
import { browserIdentity, readImportFile, type ExportFormat } from '@promethea/cpp-client';
import { useBranch, useCPP, usePresence, useThreadSearch, useThreads } from '@promethea/cpp-react';
import { useCallback, useEffect, useMemo, useRef, useState, type KeyboardEvent } from 'react';
import { ConnectionBadge } from './components/connection-badge.js';
import { Conversation } from './components/conversation.js';
import { ErrorList } from './components/error-list.js';
import { PresenceAvatars } from './components/presence-avatars.js';
import { Notice } from './components/notice.js';
import { ThreadList } from './components/thread-list.js';
import { TreeMinimap } from './components/tree-minimap.js';
import { useErrorFeed } from './hooks/use-error-feed.js';
import { useModels } from './hooks/use-models.js';
import { SharePanel } from './components/share-panel.js';
import { joinTokenInLocation, useJoinLink } from './hooks/use-join-link.js';
import { useThreadLocation } from './hooks/use-thread-location.js';
import { distinctTitle } from './lib/import-titles.js';
import { sessionEndpoint } from './lib/session-endpoint.js';
import { threadAfterDeletion } from './lib/thread-groups.js';

type Panel = 'threads' | 'tree';

/** The tools this page runs for the models (docs/PROTOCOL.md §26.10): what only the browser knows. */
const CLIENT_TOOLS = { time_zone: () => Intl.DateTimeFormat().resolvedOptions().timeZone };

export function App() {
  // This browser's did:key, kept in IndexedDB as a key no script can read: every tab and visit proves the same
  // identity to the server. A promise: the client connects once it is loaded.
  const identity = useMemo(() => browserIdentity(), []);
  const endpoint = useMemo(() => sessionEndpoint(window.location), []);
  const cpp = useCPP({ endpoint, identity, tools: CLIENT_TOOLS });
  const [ownDid, setOwnDid] = useState<string>();
  useEffect(() => {
    identity.then((signer) => setOwnDid(signer.did)).catch(() => undefined);
  }, [identity]);
  const { client } = cpp;
  const feed = useErrorFeed(client);
  const { threads, hasMore, loadMore, error: threadsError, refresh: refreshThreads } = useThreads(client);
  const [threadId, showThread] = useThreadLocation();
  const graph = cpp.graph?.threadId === threadId ? cpp.graph : undefined;
  const branch = useBranch(client, graph);
  const [panel, setPanel] = useState<Panel | undefined>();
  const [revealId, setRevealId] = useState<string>();
  const [query, setQuery] = useState('');
  const { hits, error: searchError } = useThreadSearch(client, query);
  // A search hit in another thread: shown once that thread's graph is here.
  const [pendingHit, setPendingHit] = useState<SearchHit>();
  const { report } = feed;
  const { models, defaultModel } = useModels(client, report);
  // The model picked for the next message, for every thread of this tab; the server's default until one is picked.
  const [pickedModel, setPickedModel] = useState<string>();
  const model = pickedModel ?? defaultModel;
  // The models asked beside it, their answers side by side (PROTOCOL.md §30); none until the person picks some.
  const [comparedModels, setComparedModels] = useState<string[]>([]);
  const [notice, setNotice] = useState<string>();
  const [sharing, setSharing] = useState(false);
  const shareButton = useRef<HTMLButtonElement>(null);
  // The thread as the list gives it: a role when it is another identity's, shared with this one.
  const listed = threads?.find((thread) => thread.threadId === graph?.threadId);
  const owned = listed !== undefined && listed.role === undefined;
  const present = usePresence(client, graph?.threadId);
  const othersHere = present.some(({ did }) => did !== ownDid);

  // Back after a loss: said once, in words, so that a person who saw it go knows what they send now goes out. Not
  // after a first connection that took a retry: nothing was lost then.
  const lastConnection = useRef(cpp.connection);
  const wasLive = useRef(false);
  useEffect(() => {
    if (cpp.connection === 'live') {
      if (wasLive.current && lastConnection.current === 'reconnecting')
        setNotice('Connected again: the conversation is up to date, and what you send goes out now.');
      wasLive.current = true;
    }
    lastConnection.current = cpp.connection;
  }, [cpp.connection]);

  useEffect(() => {
    if (client && threadId !== undefined) client.openThread(threadId).catch(report);
  }, [client, threadId, report]);

  useJoinLink(client, report);

  // Without a thread in the URL (nor a join link, which brings one), continue the most recent one, or start the first.
  useEffect(() => {
    if (threadId === undefined && threads !== undefined && joinTokenInLocation() === undefined)
      showThread(threads[0]?.threadId ?? newThreadId());
  }, [threadId, threads, showThread]);

  useEffect(() => {
    if (threadsError) report(threadsError);
  }, [threadsError, report]);

  useEffect(() => {
    if (searchError) report(searchError);
  }, [searchError, report]);

  const selectThread = (id: string) => {
    showThread(id);
    setPanel(undefined);
  };

  const startThread = () => {
    setPanel(undefined);
    // An empty thread is already a new one.
    if (graph?.rootNodeId === null) document.querySelector<HTMLTextAreaElement>('.composer textarea')?.focus();
    else showThread(newThreadId());
  };

  const branchIds = useMemo(() => new Set(branch.entries.map((entry) => entry.node.id)), [branch.entries]);
  const { showBranchOf } = branch;
  const jumpTo = useCallback(
    (nodeId: string) => {
      setPanel(undefined);
      setRevealId(nodeId);
      if (!branchIds.has(nodeId)) showBranchOf(nodeId).catch(report);
    },
    [branchIds, showBranchOf, report],
  );
  const onRevealed = useCallback(() => setRevealId(undefined), []);

  useEffect(() => {
    if (!pendingHit || graph?.threadId !== pendingHit.threadId) return;
    setPendingHit(undefined);
    if (pendingHit.nodeId !== null && graph.nodes[pendingHit.nodeId]) jumpTo(pendingHit.nodeId);
  }, [pendingHit, graph, jumpTo]);

  const openHit = (hit: SearchHit) => {
    setPendingHit(hit);
    selectThread(hit.threadId);
  };

  const renameThread = (id: string, title: string) => {
    client?.renameThread(title, { threadId: id }).catch(report);
  };

  const deleteThread = (id: string) => {
    client
      ?.deleteThread(id)
      .then(() => {
        // The URL must not keep naming it: opening it again would start a new thread under its id. The thread shown
        // instead is the one the thread list gives the focus to.
        if (id === threadId) showThread(threadAfterDeletion(threads ?? [], id) ?? newThreadId());
      })
      .catch(report);
  };

  const exportThread = (id: string, format: ExportFormat) => {
    client
      ?.exportThread(format, id)
      .then((text) => {
        const title = threads?.find((thread) => thread.threadId === id)?.title || id;
        download(
          text,
          `${fileName(title)}.${format === 'markdown' ? 'md' : 'json'}`,
          format === 'markdown' ? 'text/markdown' : 'application/json',
        );
      })
      .catch(report);
  };

  const importThreads = (text: string) => {
    if (!client) return;
    Promise.resolve()
      .then(() => {
        const { format, document } = readImportFile(text);
        return client.importThreads(format, document);
      })
      .then(async (imported) => {
        // Each imported thread gets a title no other thread has, and the first opens, so that the person sees
        // what came in and where.
        const taken = new Set((threads ?? []).map((thread) => thread.title));
        const titles: string[] = [];
        for (const thread of imported) {
          const title = distinctTitle(thread.title, taken);
          taken.add(title);
          titles.push(title || 'New conversation');
          if (title !== thread.title) await client.renameThread(title, { threadId: thread.threadId });
        }
        refreshThreads();
        const [first] = imported;
        if (!first) return setNotice('The file holds no conversation: nothing was imported.');
        setNotice(
          imported.length === 1
            ? `Imported “${titles[0]}”: it is open now.`
            : `Imported ${imported.length} threads; the first, “${titles[0]}”, is open now.`,
        );
        selectThread(first.threadId);
      })
      .catch((error: unknown) =>
        report(
          error instanceof Error && error.message.startsWith('the file is')
            ? new Error(`Nothing was imported: ${error.message}.`)
            : error,
        ),
      );
  };

  const onKeyDown = (event: KeyboardEvent) => {
    if (event.key === 'Escape' && panel) {
      event.preventDefault();
      setPanel(undefined);
    }
  };

  const closeSharing = () => {
    setSharing(false);
    shareButton.current?.focus();
  };

  const togglePanel = (which: Panel) => setPanel((open) => (open === which ? undefined : which));

  return (
    // biome-ignore lint/a11y/noStaticElementInteractions: the app's shortcuts ("/", Esc) come from whichever control has the focus, bubbling here
    <div className={`app${panel ? ` panel-open panel-${panel}` : ''}`} onKeyDown={onKeyDown}>
      <header className="top-bar">
        <button
          type="button"
          className="quiet panel-toggle threads-toggle"
          aria-expanded={panel === 'threads'}
          aria-controls="threads-panel"
          onClick={() => togglePanel('threads')}
        >
          ☰ Threads
        </button>
        <h1>CPP chat</h1>
        <ConnectionBadge connection={cpp.connection} />
        <PresenceAvatars present={present} ownDid={ownDid} />
        {owned && (
          <button
            ref={shareButton}
            type="button"
            className="quiet"
            aria-expanded={sharing}
            aria-controls={sharing ? 'share-panel' : undefined}
            onClick={() => setSharing((open) => !open)}
          >
            Share
          </button>
        )}
        <button
          type="button"
          className="quiet panel-toggle tree-toggle"
          aria-expanded={panel === 'tree'}
          aria-controls="tree-panel"
          onClick={() => togglePanel('tree')}
        >
          Tree
        </button>
      </header>
      <div id="threads-panel" className="side threads-panel">
        <ThreadList
          threads={threads}
          activeThreadId={threadId}
          shownThreadId={graph?.threadId}
          onSelect={selectThread}
          onNew={startThread}
          onRename={renameThread}
          onDelete={deleteThread}
          onExport={exportThread}
          onImport={importThreads}
          query={query}
          onQueryChange={setQuery}
          hits={hits}
          onOpenHit={openHit}
          hasMore={hasMore}
          onLoadMore={loadMore}
        />
      </div>
      <main className="main">
        <ErrorList errors={feed.errors} onDismiss={feed.dismiss} />
        <Notice text={notice} onDismiss={() => setNotice(undefined)} />
        {sharing && owned && client && graph && (
          <SharePanel client={client} threadId={graph.threadId} report={report} onClose={closeSharing} />
        )}
        {graph ? (
          <Conversation
            key={graph.threadId}
            client={client}
            graph={graph}
            branch={branch}
            connection={cpp.connection}
            revealId={revealId}
            onRevealed={onRevealed}
            report={report}
            models={models}
            model={model}
            onModelChange={setPickedModel}
            compared={comparedModels}
            onComparedChange={setComparedModels}
            ownDid={ownDid}
            readOnly={listed?.role === 'reader'}
            othersHere={othersHere}
          />
        ) : (
          <p className="loading muted" role="status">
            Opening the conversation…
          </p>
        )}
      </main>
      <div id="tree-panel" className="side tree-panel">
        {graph && <TreeMinimap graph={graph} branchIds={branchIds} onJump={jumpTo} />}
      </div>
    </div>
  );
}

/** Saves `text` as a file the browser downloads. */
function download(text: string, name: string, type: string): void {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const link = document.createElement('a');
  link.href = url;
  link.download = name;
  link.click();
  // Revoked once the click has handed the file to the browser, not during it.
  setTimeout(() => URL.revokeObjectURL(url));
}

/** A thread's title as a file name that every system takes. */
function fileName(title: string): string {
  return (
    title
      .replace(/[^\p{L}\p{N}]+/gu, '-')
      .replace(/^-+|-+$/g, '')
      .slice(0, 80) || 'thread'
  );
}
