// The one line a terminal redraws in place (import progress), and log lines printed above it, not onto it.
import Foundation
import Logging

/// A progress bar is drawn with "\r" and no newline, so a log line written meanwhile (a warning about a corrupt
/// file) would continue the bar's line: "read 45/45 2026-11-28T00:40:22 warning …". Every line that is not the
/// bar goes through `printAbove`: the bar is cleared, the line printed, and the bar drawn again below it.
final class TerminalStatusLine: @unchecked Sendable {
    private let lock = NSLock()
    /// What the bar shows now; nil when no bar is on the screen.
    private var shown: String?

    private func write(_ text: String) { FileHandle.standardError.write(Data(text.utf8)) }

    /// Draws `text` in place of the bar (or as the first bar).
    func show(_ text: String) {
        lock.lock()
        defer { lock.unlock() }
        shown = text
        write("\r\u{1B}[K" + text)
    }

    /// Leaves the bar on the screen as it is and moves below it: what comes next starts a line of its own.
    func end() {
        lock.lock()
        defer { lock.unlock() }
        if shown != nil { write("\n") }
        shown = nil
    }

    /// Runs `print` (which writes whole lines to the terminal) with the bar cleared, then draws the bar again.
    func printAbove(_ print: () -> Void) {
        lock.lock()
        defer { lock.unlock() }
        if shown != nil { write("\r\u{1B}[K") }
        print()
        if let shown { write(shown) }
    }
}

/// swift-log's stream handler, its lines printed above the status line.
struct StatusLineLogHandler: LogHandler {
    var inner: StreamLogHandler
    let statusLine: TerminalStatusLine

    var logLevel: Logger.Level {
        get { inner.logLevel }
        set { inner.logLevel = newValue }
    }
    var metadata: Logger.Metadata {
        get { inner.metadata }
        set { inner.metadata = newValue }
    }
    var metadataProvider: Logger.MetadataProvider? {
        get { inner.metadataProvider }
        set { inner.metadataProvider = newValue }
    }
    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { inner[metadataKey: key] }
        set { inner[metadataKey: key] = newValue }
    }

    func log(event: LogEvent) {
        statusLine.printAbove { inner.log(event: event) }
    }
}
