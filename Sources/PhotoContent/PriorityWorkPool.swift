// A fixed set of threads running keyed jobs, what a user waits for before background work, each key once.
import Foundation

/// Runs jobs on `width` threads. Jobs have a key: asking for a key already queued or running joins that job
/// (single flight) instead of doing the work twice, and a user's request moves a queued background job to
/// the front. Used for rendering variants: the photo someone opened goes before `ls -l` and prefetch work.
public final class PriorityWorkPool<Output>: @unchecked Sendable {
    public enum Priority: Int, Sendable {
        case user = 0
        case background = 1
    }

    final class Job {
        let key: String
        var priority: Priority
        let work: () throws -> Output
        var outcome: Result<Output, Error>?
        /// Callers blocked in `run` on this job, and whether a thread took it: what tests poll instead of sleeping.
        var waiters = 0
        var started = false
        init(key: String, priority: Priority, work: @escaping () throws -> Output) {
            self.key = key; self.priority = priority; self.work = work
        }
    }

    private let condition = NSCondition()
    /// Waiting jobs, FIFO within each priority (index = priority's raw value); `heads` is where each
    /// lane's next job is, so taking one is O(1) even with a 17,500-photo directory queued.
    private var queued: [[Job]] = [[], []]
    private var heads = [0, 0]
    private var jobs: [String: Job] = [:]
    private var stopped = false
    public let width: Int

    public init(width: Int, name: String) {
        self.width = max(1, width)
        for index in 0..<self.width {
            let thread = Thread { [weak self] in self?.serve() }
            thread.name = "\(name)-\(index)"
            thread.start()
        }
    }

    /// Runs (or joins) the job for `key` and waits for its outcome.
    public func run(key: String, priority: Priority, _ work: @escaping () throws -> Output) throws -> Output {
        condition.lock()
        let job = enqueueLocked(key: key, priority: priority, work)
        job.waiters += 1
        while job.outcome == nil { condition.wait() }
        job.waiters -= 1
        condition.unlock()
        return try job.outcome!.get()
    }

    /// Queues the job for `key` unless it is already queued or running; does not wait.
    public func submit(key: String, priority: Priority, _ work: @escaping () throws -> Output) {
        condition.lock()
        _ = enqueueLocked(key: key, priority: priority, work)
        condition.unlock()
    }

    /// Callers waiting in `run` for the job of `key` (0 when there is none).
    public func waitingCount(for key: String) -> Int {
        condition.lock()
        defer { condition.unlock() }
        return jobs[key]?.waiters ?? 0
    }

    /// Whether a thread is working on the job of `key` right now.
    public func isWorking(on key: String) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        return jobs[key]?.started ?? false
    }

    /// Ends the threads after their current job; queued jobs fail, so nobody waits for them forever.
    public func stop() {
        condition.lock()
        stopped = true
        for lane in 0..<2 {
            for job in queued[lane][heads[lane]...] {
                job.outcome = .failure(CancellationError())
                jobs[job.key] = nil
            }
        }
        queued = [[], []]
        heads = [0, 0]
        condition.broadcast()
        condition.unlock()
    }

    private func enqueueLocked(key: String, priority: Priority, _ work: @escaping () throws -> Output) -> Job {
        if let existing = jobs[key] {
            if priority.rawValue < existing.priority.rawValue, existing.outcome == nil,
               let index = queued[existing.priority.rawValue][heads[existing.priority.rawValue]...]
                   .firstIndex(where: { $0 === existing }) {
                queued[existing.priority.rawValue].remove(at: index)
                existing.priority = priority
                queued[priority.rawValue].append(existing)
            }
            return existing
        }
        let job = Job(key: key, priority: priority, work: work)
        if stopped {
            job.outcome = .failure(CancellationError())
            return job
        }
        jobs[key] = job
        queued[priority.rawValue].append(job)
        condition.broadcast()
        return job
    }

    private func serve() {
        while true {
            condition.lock()
            while !stopped && heads[0] == queued[0].count && heads[1] == queued[1].count { condition.wait() }
            if stopped { condition.unlock(); return }
            let lane = heads[0] < queued[0].count ? 0 : 1
            let job = queued[lane][heads[lane]]
            heads[lane] += 1
            if heads[lane] == queued[lane].count { queued[lane].removeAll(keepingCapacity: true); heads[lane] = 0 }
            job.started = true
            condition.unlock()
            let outcome = Result { try job.work() }
            condition.lock()
            job.outcome = outcome
            jobs[job.key] = nil
            condition.broadcast()
            condition.unlock()
        }
    }
}
