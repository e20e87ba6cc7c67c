-- A task's trail, for operators (the console's timeline): which pod created, started and finished a tool
-- call, in fields of the task hash itself, set by the script of each transition (no command of their own):
-- `cpod` (creation, at createdAt), `spod` (the current attempt's start, at startedAt), `fpod` (the terminal
-- transition, at lastUpdatedAt; absent when the pod that started the attempt ended it) and, for retried tasks, `starts`: the earlier attempts, one
-- "<attempt> <ms> <pod>" line each. Each value stays short, so a task's hash stays a listpack. `pod` is the
-- caller's pod name ('' when it keeps no trail); records without a tool get none.
local TRAIL_MAX_BYTES = 4096
local function trailPod(task, pod)
  if not task.tool or not pod or pod == '' then return nil end
  return pod
end

-- Adds the trail fields of a start to `fields`: the new attempt's pod, and the previous attempt's start moved
-- to `starts` (the oldest lines dropped past TRAIL_MAX_BYTES).
local function trailStart(fields, task, pod)
  pod = trailPod(task, pod)
  if not pod then return end
  fields.spod = pod
  if task.spod and task.startedAt then
    local line = (task.attempt or '1') .. ' ' .. task.startedAt .. ' ' .. task.spod
    local starts = task.starts and (task.starts .. '\n' .. line) or line
    if #starts > TRAIL_MAX_BYTES then
      local cut = string.find(starts, '\n', #starts - TRAIL_MAX_BYTES, true)
      starts = cut and string.sub(starts, cut + 1) or line
    end
    fields.starts = starts
  end
end

-- The `fpod` of a terminal transition: the pod's name, or nil when it is the pod that started the current
-- attempt (`fields`: what the transition writes, which may start it), whose `spod` says it already.
local function trailFinish(task, fields, pod)
  pod = trailPod(task, pod)
  if pod == (fields.spod or task.spod) then return nil end
  return pod
end
