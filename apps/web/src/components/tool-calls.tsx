import type { ToolCall } from '@promethea/cpp-protocol';

interface ToolCallsProps {
  calls: readonly ToolCall[];
  /** The answer still streams: a call waiting for approval can be answered. */
  streaming: boolean;
  onApproval(toolCallId: string, approved: boolean): void;
}

const STATE_LABELS: Record<ToolCall['state'], string> = {
  'input-streaming': 'asking…',
  'approval-requested': 'waits for your approval',
  'input-available': 'running…',
  'output-available': 'done',
  'output-error': 'failed',
  'output-denied': 'denied',
  interrupted: 'stopped the tool here',
};

/**
 * The tools an answer called (docs/PROTOCOL.md §26): each with its name, state, progress, input and output. Input and
 * output are a model's and a tool's text, shown as text, never as HTML; long ones fold away.
 */
export function ToolCalls({ calls, streaming, onApproval }: ToolCallsProps) {
  return (
    <ul className="tool-calls" aria-label="Tool calls">
      {calls.map((call) => (
        <li key={call.toolCallId} className={`tool-call tool-call-${call.state}`} data-tool-call-id={call.toolCallId}>
          <details>
            <summary>
              <span className="tool-name">{call.toolName}</span> <span className="tool-state">{stateOf(call)}</span>
            </summary>
            <pre className="tool-input">{call.input}</pre>
            {call.output !== undefined && <pre className="tool-output">{call.output}</pre>}
            {call.errorText !== undefined && <p className="tool-error">{call.errorText}</p>}
            {call.approval?.reason && <p className="tool-reason">Reason: {call.approval.reason}</p>}
          </details>
          {call.state === 'approval-requested' && streaming && (
            <span className="tool-approval">
              <button type="button" onClick={() => onApproval(call.toolCallId, true)}>
                Approve
              </button>
              <button type="button" onClick={() => onApproval(call.toolCallId, false)}>
                Deny
              </button>
            </span>
          )}
        </li>
      ))}
    </ul>
  );
}

function stateOf(call: ToolCall): string {
  const { progress } = call;
  if (call.state !== 'input-available' || !progress) return STATE_LABELS[call.state];
  const total = progress.total === undefined ? '' : ` of ${progress.total}`;
  return `running… ${progress.progress}${total}`;
}
