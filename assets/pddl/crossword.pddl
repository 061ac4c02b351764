; Crossword domain: put letter blocks into the numbered slots of a board.
;
; What each predicate means on the table:
;   (on-table ?b)        letter block ?b lies on the table, off the board.
;   (in-slot ?b ?s)      block ?b sits in board slot ?s.
;   (slot-empty ?s)      no block sits in slot ?s, so one can be put there.
;   (hand-empty)         the gripper holds nothing.
;   (holding ?b)         block ?b is in the gripper.
;
; Letters are not modelled (the domain stays STRIPS): the problem generator reads the
; letters, solves the puzzle and states the goal as (in-slot <block> <slot>) facts that say
; which block fills which slot. Blocks and slots not named in the goal may stay as they are.
(define (domain crossword)
  (:requirements :strips :typing)
  (:types block slot - object)
  (:predicates
   (on-table ?b - block)
   (in-slot ?b - block ?s - slot)
   (slot-empty ?s - slot)
   (hand-empty)
   (holding ?b - block))

  (:action pick
   :parameters (?b - block)
   :precondition (and (hand-empty)
                      (on-table ?b))
   :effect (and (holding ?b)
                (not (hand-empty))
                (not (on-table ?b))))

  (:action pick-from-slot
   :parameters (?b - block ?s - slot)
   :precondition (and (hand-empty)
                      (in-slot ?b ?s))
   :effect (and (holding ?b)
                (slot-empty ?s)
                (not (hand-empty))
                (not (in-slot ?b ?s))))

  (:action place-in-slot
   :parameters (?b - block ?s - slot)
   :precondition (and (holding ?b)
                      (slot-empty ?s))
   :effect (and (in-slot ?b ?s)
                (hand-empty)
                (not (slot-empty ?s))
                (not (holding ?b))))

  (:action place-on-table
   :parameters (?b - block)
   :precondition (holding ?b)
   :effect (and (on-table ?b)
                (hand-empty)
                (not (holding ?b)))))
