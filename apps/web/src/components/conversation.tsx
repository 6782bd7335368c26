import type { CPPClient } from '@promethea/cpp-client';
import {
  type Attachment,
  CPPError,
  ErrorCode,
  getNode,
  type ModelInfo,
  type ThreadGraph,
} from '@promethea/cpp-protocol';
import type { Branch, ConnectionState } from '@promethea/cpp-react';
import { useCallback, useEffect, useMemo, useRef, useState, type DragEvent } from 'react';
import { AttachmentClient } from '../hooks/attachment-client.js';
import { type AttachmentDraft, useAttachmentDrafts } from '../hooks/use-attachment-drafts.js';
import { useTypingSignal } from '../hooks/use-typing-signal.js';
import { Composer, type SendMode } from './composer.js';
import { EmptyState } from './empty-state.js';
import { MessageList } from './message-list.js';

interface ConversationProps {
  client: CPPClient | null;
  graph: ThreadGraph;
  branch: Branch;
  connection: ConnectionState;
  revealId: string | undefined;
  onRevealed(): void;
  report(error: unknown): void;
  models: ModelInfo[];
  /** The model the next prompt or pivot names; `undefined`: the server's default. */
  model: string | undefined;
  onModelChange(model: string): void;
  /** The models that answer beside `model`, side by side (PROTOCOL.md §30); none: `model` alone. */
  compared: readonly string[];
  onComparedChange(compared: string[]): void;
  /** This browser's DID, once known: a prompt it wrote is "You", another member's shows its author. */
  ownDid: string | undefined;
  /** Shared with this identity as a reader: it sees the thread live and changes nothing. */
  readOnly: boolean;
  /** Another member has the thread open: they are told when this person types. */
  othersHere: boolean;
}

/** The branch on screen as a chat, and the composer whose send becomes a pivot while the answer streams. */
export function Conversation({
  client,
  graph,
  branch,
  connection,
  revealId,
  onRevealed,
  report,
  models,
  model,
  onModelChange,
  compared,
  onComparedChange,
  ownDid,
  readOnly,
  othersHere,
}: ConversationProps) {
  const { entries, headId } = branch;
  // The answer a send pivots: the head when it streams (an answer picked among several side by side), else the first.
  const generating = branch.streamingNodes.find((node) => node.id === headId) ?? branch.streaming;
  // The next message's models: several side by side, or the one picked.
  const chosen = useMemo(() => {
    const others = compared.filter((id) => id !== model);
    return model !== undefined && others.length > 0 ? { models: [model, ...others] } : { model };
  }, [model, compared]);
  const threadId = graph.threadId;
  const live = connection === 'live';
  // While the connection is down nothing streams here: the answer shows as cut off by it, with no Stop and no pivot.
  const streaming = live ? generating : undefined;
  const generatingOnScreen = generating !== undefined && entries.some((entry) => entry.node.id === generating.id);
  const streamingOnScreen = live && generatingOnScreen;
  // What this render shows of the streaming answer is what a pivot or stop keeps: the person saw exactly that.
  const shownLength = generatingOnScreen ? generating.content.length : 0;
  const shownReasoningLength = generatingOnScreen ? (generating.reasoning?.length ?? 0) : 0;
  const mode: SendMode = streaming === undefined ? 'prompt' : streamingOnScreen ? 'pivot' : 'stop-then-prompt';
  const head = headId === null ? undefined : getNode(graph, headId);
  const headShownLast = head !== undefined && entries.at(-1)?.node.id === head.id;
  // A head on a prompt (its answer deleted, or anchored there by another client): the next message is another version
  // of that prompt, beside it, as an edit is, not a second prompt in a row under it (a first prompt's: another first
  // prompt).
  const besidePrompt = headShownLast && head.role === 'user' ? head : undefined;
  const branchFrom = headShownLast && !besidePrompt && head.childrenIds.length > 0 ? head : undefined;

  const composerInput = useRef<HTMLTextAreaElement>(null);

  // Sent while the connection is down: the client sends them once it is back; until the server has them (a user node
  // with their text that was not there before), they show as unsent below the branch.
  const [pending, setPending] = useState<{ id: number; text: string; before: ReadonlySet<string> }[]>([]);
  const pendingCount = useRef(0);
  useEffect(() => {
    setPending((waiting) => {
      const kept = waiting.filter(
        ({ text, before }) =>
          !Object.values(graph.nodes).some(
            (node) => node.role === 'user' && node.content === text && !before.has(node.id),
          ),
      );
      return kept.length === waiting.length ? waiting : kept;
    });
  }, [graph]);

  const files = useAttachmentDrafts(client, report);
  const onTextChange = useTypingSignal(client, threadId, othersHere && !readOnly && connection === 'live');
  // Files dragged over the chat: it says where they go while they are held over it.
  const [dragging, setDragging] = useState(false);
  const canDrop = !readOnly && connection !== 'closed';
  const onDragOver = (event: DragEvent) => {
    if (!canDrop || !event.dataTransfer.types.includes('Files')) return;
    event.preventDefault();
    event.dataTransfer.dropEffect = 'copy';
    setDragging(true);
  };
  const onDragLeave = (event: DragEvent) => {
    if (!event.currentTarget.contains(event.relatedTarget as Node | null)) setDragging(false);
  };
  const onDrop = (event: DragEvent) => {
    setDragging(false);
    if (!canDrop || event.dataTransfer.files.length === 0) return;
    event.preventDefault();
    files.add([...event.dataTransfer.files]);
    composerInput.current?.focus();
  };

  const onSend = async (userPrompt: string, sentFiles: readonly AttachmentDraft[] = []): Promise<boolean> => {
    if (!client) return false;
    const attachments = uploadsOf(sentFiles);
    const unsent = live
      ? undefined
      : { id: (pendingCount.current += 1), text: userPrompt, before: new Set(Object.keys(graph.nodes)) };
    if (unsent) setPending((waiting) => [...waiting, unsent]);
    // Sent while away, a message is still a pivot of the answer that was streaming: if the server still writes it
    // then, it is cut there; if it was cut meanwhile, the message branches under it just the same (PROTOCOL.md §6.6).
    const generation =
      mode === 'pivot' || (unsent && generatingOnScreen)
        ? client.pivot({
            userPrompt,
            threadId,
            nodeId: generating?.id,
            receivedContentLength: shownLength,
            ...chosen,
            attachments,
          })
        : (mode === 'stop-then-prompt' ? client.stop({ threadId }).catch(ignoreNotStreaming) : Promise.resolve()).then(
            () => client.prompt({ userPrompt, threadId, ...chosen, parentNodeId: besidePrompt?.parentId, attachments }),
          );
    return generation.then(
      () => true,
      (error: unknown) => {
        if (unsent) setPending((waiting) => waiting.filter((entry) => entry !== unsent));
        report(error);
        // A provider failure happened after the prompt was taken; anything else refused it, so give the text back.
        return CPPError.isInstance(error) && error.code === ErrorCode.PROVIDER_ERROR;
      },
    );
  };

  // Stop ends every answer: several side by side each stop where the screen shows it, which is all the page holds.
  const several = branch.streamingNodes.length > 1;
  const onStop = useCallback(() => {
    const shown = streamingOnScreen && !several ? shownLength : undefined;
    client?.stop({ threadId, receivedContentLength: shown }).catch(report);
  }, [client, threadId, streamingOnScreen, several, shownLength, report]);

  const onAnchor = useCallback(
    (nodeId: string) => {
      client?.anchor(nodeId, { threadId }).catch(report);
    },
    [client, threadId, report],
  );

  const { showBranchOf, regenerate, edit, continueAnswer, deleteBranch } = branch;
  const onShowBranch = useCallback((nodeId: string) => showBranchOf(nodeId).catch(report), [showBranchOf, report]);
  // A regenerated answer and the answer to an edited prompt come from the model picked now, as a new prompt's does
  // (the server's default would otherwise write them). Continue goes on with the answer's own model.
  const onRegenerate = useCallback(
    (nodeId: string) => void regenerate(nodeId, chosen).catch(report),
    [regenerate, chosen, report],
  );
  // An edit is a new prompt beside the old one, carrying the same files (PROTOCOL.md §27.4).
  const onEdit = useCallback(
    (nodeId: string, userPrompt: string) => {
      const edited = graph.nodes[nodeId];
      void edit(nodeId, userPrompt, { ...chosen, attachments: edited?.attachments }).catch(report);
    },
    [edit, graph.nodes, chosen, report],
  );
  const onContinue = useCallback(
    (nodeId: string) => void continueAnswer(nodeId).catch(report),
    [continueAnswer, report],
  );
  const onDelete = useCallback((nodeId: string) => void deleteBranch(nodeId).catch(report), [deleteBranch, report]);
  const onToolApproval = useCallback(
    (nodeId: string, toolCallId: string, approved: boolean) =>
      void client?.respondToToolCall({ threadId, nodeId, toolCallId, approved }).catch(report),
    [client, threadId, report],
  );

  return (
    <AttachmentClient value={client}>
      <section
        className={`conversation${dragging ? ' dragging-files' : ''}`}
        aria-label="Chat"
        onDragOver={onDragOver}
        onDragLeave={onDragLeave}
        onDrop={onDrop}
      >
        {dragging && (
          <p className="drop-hint" aria-hidden="true">
            Drop the files to attach them to your message
          </p>
        )}
        <MessageList
          ownDid={ownDid}
          entries={entries}
          headId={headId}
          onAnchor={onAnchor}
          onShowBranch={onShowBranch}
          onRegenerate={onRegenerate}
          onContinue={onContinue}
          onEdit={onEdit}
          onDelete={onDelete}
          onToolApproval={onToolApproval}
          report={report}
          readOnly={readOnly}
          connectionLost={!live}
          pending={pending}
          revealId={revealId}
          onRevealed={onRevealed}
          empty={
            <EmptyState
              onPick={(prompt) => {
                composerInput.current?.focus();
                void onSend(prompt);
              }}
            />
          }
        />
        <Composer
          mode={mode}
          blockedBy={
            connection === 'closed'
              ? 'Offline: reload the page to connect again.'
              : readOnly
                ? 'Read only: its owner shared this conversation with you to read, not to write.'
                : undefined
          }
          notice={
            connection === 'live'
              ? undefined
              : 'Not connected yet: what you send goes out as soon as the connection is back.'
          }
          branchFrom={branchFrom}
          besidePrompt={besidePrompt}
          streaming={streaming !== undefined}
          shownLength={shownLength}
          shownReasoningLength={shownReasoningLength}
          onSend={onSend}
          onStop={onStop}
          onReturnToLatest={() => head && onShowBranch(head.id)}
          inputRef={composerInput}
          models={models}
          model={model}
          onModelChange={onModelChange}
          compared={compared}
          onComparedChange={onComparedChange}
          files={files}
          onTextChange={onTextChange}
        />
      </section>
    </AttachmentClient>
  );
}

/** The uploads of the files a message carries, or none: a prompt names its files only when it has some. */
function uploadsOf(drafts: readonly AttachmentDraft[]): Attachment[] | undefined {
  const uploads = drafts.flatMap((draft) => (draft.attachment ? [draft.attachment] : []));
  return uploads.length > 0 ? uploads : undefined;
}

/** The other answer may have ended on its own between the click and the stop: then there is nothing to stop. */
function ignoreNotStreaming(error: unknown): void {
  if (!CPPError.isInstance(error) || error.code !== ErrorCode.NOT_STREAMING) throw error;
}
