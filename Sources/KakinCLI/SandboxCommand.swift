import ArgumentParser

/// `kakin sandbox`: runs the sandbox App Store (the default), or drives a running one through its
/// control API, the way Xcode's transaction manager drives StoreKit testing.
struct SandboxCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sandbox",
        abstract:
            "Run the sandbox App Store, or act on a running one (refund, renew, approve, the clock, its certificates).",
        discussion: """
            Without a subcommand, or with `run`, the sandbox starts. The other subcommands call the \
            control API of a sandbox that is already running (--url, default http://127.0.0.1:8081), \
            print its answer as JSON and exit 0; a refusal from the sandbox is one line on standard \
            error and exit status 1.
            """,
        subcommands: [
            SandboxRunCommand.self, SandboxRefundCommand.self, SandboxRevokeCommand.self,
            SandboxRenewCommand.self, SandboxFailRenewalsCommand.self, SandboxResolveBillingCommand.self,
            SandboxAutoRenewCommand.self,
            SandboxApproveCommand.self, SandboxDeclineCommand.self, SandboxClearCommand.self,
            SandboxClockCommand.self, SandboxSettingsCommand.self, SandboxCACommand.self,
            SandboxCancelPageCommand.self, SandboxRetentionRequestsCommand.self,
        ],
        defaultSubcommand: SandboxRunCommand.self
    )
}
