// Lesson 09: asynchronous tasks on the work-stealing pool. One header for all of it:
//   Task<T>                  a lazy coroutine (coro_task.hpp)
//   spawn, schedule,         starting coroutines on the pool, and blocking for one from
//   sync_wait, resume_on     outside it (pool_awaitables.hpp)
//   Event                    set once, awaited by suspended coroutines (event.hpp, wait_list.hpp)
//   when_all, Channel<T>     children in parallel; a bounded queue between coroutines
#pragma once

#include "channel.hpp"
#include "coro_task.hpp"
#include "event.hpp"
#include "pool_awaitables.hpp"
#include "thread_pool.hpp"
#include "wait_list.hpp"
#include "when_all.hpp"
