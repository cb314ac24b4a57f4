import Foundation

/// The device's stream of transaction updates (StoreKit's `Transaction.updates`): every new or
/// changed transaction (purchases, approvals of deferred purchases, renewals, refunds, upgrades),
/// numbered so that a device can ask for what came after the last one it saw.
extension SandboxEngine {
    /// Transactions new or changed after `sequence`, and the sequence number to ask after next time.
    public func updates(
        of testerID: String, after sequence: Int
    ) throws(SandboxError)
        -> (transactions: [SandboxTransaction], lastSequence: Int)
    {
        _ = try tester(testerID)
        let entries = state.updates.records(in: .tester(testerID)).filter { $0.sequence > sequence }
        let transactions = entries.compactMap { state.transactions[$0.transactionID] }
        return (transactions, entries.last?.sequence ?? max(sequence, 0))
    }

    /// Each update after `sequence` with its own sequence number, oldest first: what the event
    /// stream sends as one event each.
    public func updateEntries(
        of testerID: String, after sequence: Int
    ) throws(SandboxError) -> [(sequence: Int, transaction: SandboxTransaction)] {
        _ = try tester(testerID)
        return state.updates.records(in: .tester(testerID)).filter { $0.sequence > sequence }.compactMap { entry in
            state.transactions[entry.transactionID].map { (entry.sequence, $0) }
        }
    }

    /// Waits until the next update of any tester, or until `timeout` passes, or until the task is
    /// cancelled, whichever is first. Long polling uses it; tests pass a zero timeout or trigger an update.
    public func waitForUpdate(timeout: Duration) async {
        await waitForUpdate(unless: { false }, timeout: timeout)
    }

    /// Like ``waitForUpdate(timeout:)``, but returns at once when the tester already has updates
    /// after `sequence`: checked and registered in one step, so no update can slip in between.
    public func waitForUpdate(of testerID: String, after sequence: Int, timeout: Duration) async {
        await waitForUpdate(
            unless: { (self.state.updates.last(in: .tester(testerID)) { _ in true }?.sequence ?? 0) > sequence },
            timeout: timeout)
    }

    private func waitForUpdate(unless ready: () -> Bool, timeout: Duration) async {
        guard !ready() else { return }
        let id = UUID()
        let timer = Task { [weak self] in
            try? await Task.sleep(for: timeout)
            await self?.resumeWaiter(id)
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                updateWaiters[id] = continuation
            }
        } onCancel: {
            timer.cancel()
            Task { [weak self] in await self?.resumeWaiter(id) }
        }
        timer.cancel()
    }

    /// How many long polls are waiting now.
    public var waitingPollCount: Int { updateWaiters.count }

    func noteUpdate(_ transaction: SandboxTransaction) {
        state.updates.append(
            SandboxState.TransactionUpdate(
                sequence: state.nextUpdateSequence, transactionID: transaction.id, testerID: transaction.testerID))
        state.nextUpdateSequence += 1
        let waiters = updateWaiters
        updateWaiters.removeAll()
        for continuation in waiters.values { continuation.resume() }
    }

    private func resumeWaiter(_ id: UUID) {
        updateWaiters.removeValue(forKey: id)?.resume()
    }
}
