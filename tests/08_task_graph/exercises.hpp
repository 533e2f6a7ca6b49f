// The exercises of lesson 08, with what most often makes their tests hang.
#pragma once

#include <ws/testing/harness.hpp>

WS_EXERCISE(Lesson08Ex1, "lesson 08, exercise 1 (counting predecessors and releasing the sources)",
            "run() never returns: does start() set pending_ to the number of nodes and push "
            "every node without predecessors?");
WS_EXERCISE(Lesson08Ex2, "lesson 08, exercise 2 (the finishing task releases its successors)",
            "a node is never pushed: does every finishing node decrement each successor's "
            "counter, and push the successor whose counter it brought to zero?");
WS_EXERCISE(Lesson08Ex3, "lesson 08, exercise 3 (running a graph again)",
            "the second run never ends: does reset() give every node's counter its number of "
            "predecessors back, and forget the last run's cancellation?");
WS_EXERCISE(Lesson08Ex4, "lesson 08, exercise 4 (errors: cycles, exceptions, foreign nodes)",
            "a graph with a cycle never finishes: check_acyclic() must refuse it before "
            "anything runs; or a cancelled node was skipped without counting as finished");
WS_EXERCISE(Lesson08Ex5, "lesson 08, exercise 5 (subflows)",
            "a subflow's node never finishes: does run_subflow run the subgraph (helping) "
            "after the node's task has built it?");
